// The demo page's widget started again by `Parley.init(options)`, for e2e files that test the widget's options
// (locale, theme, open): the same demo customer (its cookie keeps it), a fresh session token.
import type { Page } from 'playwright-core';

export async function restartDemoWidget(page: Page, options: Record<string, unknown>): Promise<void> {
  await page.waitForFunction(() => (window as unknown as { Parley?: { instance?: unknown } }).Parley?.instance);
  await page.evaluate(async (opts) => {
    const w = window as unknown as { Parley: { instance: { destroy(): void }; init(o: unknown): { destroy(): void } } };
    w.Parley.instance.destroy();
    const s = await fetch('/demo/session').then((r) => r.json());
    w.Parley.instance = w.Parley.init(Object.assign({ serverUrl: s.serverUrl, customerId: s.customerId, authToken: s.authToken }, opts));
  }, options);
}
