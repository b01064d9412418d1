// Issue 19 in real Chromium: the dashboard lists the conversations a person has and the webhook deliveries
// (delivered, retrying, dead), read live from Parley. Screenshot: test-artifacts/dashboard-handoff.png.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startWidgetSession } from '../support/widget-client.ts';

let browser: Browser;
let p: TestParley;
let good: WebhookReceiver;
let down: WebhookReceiver;
const SECRET = 'hook-secret-0123456789abcdef';

beforeAll(async () => {
  browser = await launchBrowser();
  good = await startWebhookReceiver({ secret: SECRET });
  down = await startWebhookReceiver({ secret: SECRET, respond: () => 503 });
  p = await startParley({
    config: {
      webhooks_retry_base_ms: 60_000, // the failing endpoint stays "retrying" while the test looks
      webhooks: {
        allow_private: true,
        endpoints: [
          { url: good.url, secret: SECRET, events: ['handoff.requested'] },
          { url: down.url, secret: SECRET, events: ['handoff.requested'] },
        ],
      },
    },
  });
  const w = await startWidgetSession(p.url(), { customerId: 'cust-dash', email: 'cust-dash@example.com' });
  w.send({ type: 'message', id: 'm1', text: 'I need a human' });
  await w.next((f) => f.type === 'status' && f.mode === 'human');
  w.close();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await p?.close();
  await good?.close();
  await down?.close();
});

describe('the dashboard with human handoff and webhooks (Chromium)', () => {
  it('lists the conversation with a person and the webhook deliveries by state', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1400 } });
    await withScreenshotOnFailure(page, 'dashboard-handoff', async () => {
      await page.goto(`${p.url()}/telemetry`);
      await page.locator('[data-testid=secret-input]').fill(TEST_SECRET);
      await page.locator('[data-testid=secret-input]').press('Enter');
      const rows = page.locator('[data-testid=with-human-row]');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
      expect(await rows.first().textContent()).toContain('cust-dash');
      expect(await rows.first().textContent()).toContain('asked for a person');
      const counts = page.locator('[data-testid=webhook-counts]');
      await expect.poll(() => counts.textContent(), { timeout: 15_000 }).toBe('1 delivered1 retrying0 dead');
      const states = await page.locator('[data-testid=webhook-row]').evaluateAll((els) => els.map((e) => e.getAttribute('data-state')));
      expect(states.sort()).toEqual(['delivered', 'retrying']);
      expect(await page.locator('[data-testid=webhook-row][data-state=retrying]').textContent()).toMatch(/503retry in \d+ s/);
      await page.locator('[data-testid=webhooks-card]').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-handoff.png'), fullPage: true });
    });
    await page.close();
  });
});
