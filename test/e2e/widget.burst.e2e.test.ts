// Issue 33 part 1 in real Chromium: a burst of 40 lines over the per-customer rate limit ends with every bubble sent
// or showing "Not sent · Retry"; the widget re-sends the refused lines by itself after the wait; a reload in the
// middle keeps the unsent ones (localStorage) and sends them again; in the end every line is stored exactly once
// (read through the conversations API). And a paste over the message limit is refused in the input, never cut.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { conversationIdFor } from '../../src/conversations/history.ts';
import { join } from 'node:path';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';

let browser: Browser;
let parley: TestParley;

beforeAll(async () => {
  browser = await launchBrowser();
  // 60 a minute: a burst of 20 is taken at once, then one a second.
  parley = await startParley({ config: { demo: { backend: true }, identity: { allow_anonymous: false }, channels: { web: { rate_limit_per_minute: 60 } } } });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await parley?.close();
});

const api = async (path: string) => {
  const res = await fetch(`${parley.url()}${path}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  return (await res.json()) as any;
};

const states = (page: Page) => page.locator('[data-testid=message][data-role=user]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));

async function openWidget(page: Page) {
  await page.locator('[data-testid=launcher]').click();
  await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
}

describe('a burst over the rate limit in the widget (Chromium)', () => {
  it('every line ends sent or visibly not sent, and after a reload and the retries each is stored exactly once', async () => {
    const page = await browser.newPage();
    await withScreenshotOnFailure(page, 'widget-burst', async () => {
      const session = page.waitForResponse((r) => r.url().endsWith('/demo/session'));
      await page.goto(`${parley.url()}/demo.html`);
      const { customerId } = (await (await session).json()) as { customerId: string };
      await openWidget(page);
      const lines = Array.from({ length: 40 }, (_, i) => `burst line ${i + 1}`);
      const input = page.locator('[data-testid=input]');
      for (const line of lines) {
        await input.fill(line);
        await input.press('Enter');
      }
      // Every bubble settles: sent, or not sent with a Retry button (none stays on "Sending…" for good).
      await expect
        .poll(
          async () => {
            const s = await states(page);
            return s.length === 40 && s.every((x) => x === 'sent' || x === 'failed') && s.includes('failed');
          },
          { timeout: 30_000, interval: 50 },
        )
        .toBe(true);
      const failed = page.locator('[data-testid=message][data-state=failed]');
      expect(await failed.first().locator('[data-testid=retry]').textContent()).toBe('Retry');
      await failed.first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, 'widget-burst-desktop.png') });
      await page.setViewportSize({ width: 390, height: 844 });
      await failed.first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, 'widget-burst-phone.png') });

      // A reload while lines are still unsent: they come back from localStorage and go again.
      await page.reload();
      await openWidget(page);
      await expect.poll(() => page.locator('[data-testid=message][data-role=user]').count(), { timeout: 15_000 }).toBe(40);
      // Retry by hand on one of them (the rate limit may refuse it again: then it goes by itself later).
      const retry = page.locator('[data-testid=retry]').first();
      if (await retry.count()) await retry.click().catch(() => {});
      await expect.poll(async () => (await states(page)).every((x) => x === 'sent'), { timeout: 90_000, interval: 250 }).toBe(true);

      const view = await api(`/conversations/${conversationIdFor(customerId, 'web')}?limit=200`);
      const stored = (view.messages as { role: string; text: string }[]).filter((m) => m.role === 'user').map((m) => m.text);
      expect([...stored].sort()).toEqual([...lines].sort());

      // The transcript after another reload: each line once.
      await page.reload();
      await openWidget(page);
      await expect.poll(() => page.locator('[data-testid=message][data-role=user]').count(), { timeout: 15_000 }).toBe(40);
    });
    await page.close();
  }, 180_000);

  it('a paste over the limit is refused in the input with a visible count, not cut', async () => {
    const page = await browser.newPage();
    await withScreenshotOnFailure(page, 'widget-too-long', async () => {
      await page.goto(`${parley.url()}/demo.html`);
      await openWidget(page);
      const input = page.locator('[data-testid=input]');
      const long = 'x'.repeat(5000);
      await input.fill(long);
      await expect.poll(() => page.locator('[data-testid=count]').isVisible()).toBe(true);
      expect(await page.locator('[data-testid=count]').textContent()).toContain('5000 / 4000');
      await input.press('Enter');
      expect(await input.inputValue()).toHaveLength(5000);
      expect(await page.locator('[data-testid=message][data-role=user]').count()).toBe(0);
      // Shift+Enter is a new line; Enter sends the whole text
      await input.fill('first line');
      await input.press('Shift+Enter');
      await input.pressSequentially('second line');
      await input.press('Enter');
      const user = page.locator('[data-testid=message][data-role=user]');
      await expect.poll(() => user.getAttribute('data-state'), { timeout: 15_000 }).toBe('sent');
      expect(await user.locator('.text').textContent()).toBe('first line\nsecond line');
    });
    await page.close();
  }, 60_000);
});
