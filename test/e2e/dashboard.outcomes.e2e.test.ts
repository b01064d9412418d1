// Issue 39 part 4 (the dashboard fixes) in real Chromium at 1,440 and 768 px: axe-core finds no violations; a fresh
// install's few minutes of history are fitted (small buckets from the data's span, not one point of a 24 h window);
// tool failures and LLM calls each on their own axis; a cost tile and chart; conversations listed by the customer's
// email with the last message's text (store_text on); the channel filter and a custom time range narrow what is shown.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { startChromiumParley } from '../support/chromium-parley.ts';
import { TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { axeViolations } from '../support/axe.ts';

let browser: Browser;
let p: TestParley;
let llm: FakeOpenAi;
let close = async () => {};

beforeAll(async () => {
  ({
    browser,
    llm,
    parley: p,
    close,
  } = await startChromiumParley({
    llm: { model: 'fake-model', prices: { 'fake-model': { prompt: 3, completion: 12 } } },
    telemetry: { store_text: true, currency: 'EUR' },
  }));
  llm.fallback({ text: 'Your order 1001 has shipped.', usage: { prompt: 2000, completion: 500 } });
  for (const [customerId, text] of [
    ['alice', 'where is my order 1001?'],
    ['bob', 'hello there'],
  ]) {
    const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
    w.send({ type: 'message', id: 'm1', text });
    await w.next((f) => f.type === 'message');
    w.close();
  }
  await p.services.telemetry.flush();
}, 60_000);

afterAll(() => close());

async function openDashboard(width: number) {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  await page.goto(`${p.url()}/telemetry`);
  await page.evaluate((s) => sessionStorage.setItem('parley.secret', s), TEST_SECRET);
  const summary = page.waitForResponse((r) => r.url().includes('/api/v1/telemetry/summary'));
  await page.reload();
  await expect.poll(() => page.locator('[data-testid=chart] canvas').count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(6);
  await page.locator('[data-testid=conversation-row]').first().waitFor();
  return { page, summary: (await (await summary).json()) as { since: number; bucketMs: number; buckets: number[] } };
}

describe('the dashboard an operator needs (Chromium)', () => {
  for (const width of [1440, 768]) {
    it(`at ${width} px: axe finds nothing; short history fitted; own axes; cost; customers by email with their last words`, async () => {
      const { page, summary } = await openDashboard(width);
      await withScreenshotOnFailure(page, `dashboard-outcomes-${width}`, async () => {
        expect(await axeViolations(page)).toEqual([]);
        // a few seconds of history in the default 24 h window: the window starts at the data, in 10 s buckets
        expect(summary.bucketMs).toBe(10_000);
        expect(summary.since).toBeGreaterThan(Date.now() - 10 * 60_000);
        const series = (title: string) => page.locator(`[data-testid=chart][aria-label="${title}"] .u-legend .u-series`).count();
        expect(await series('Tool failures')).toBe(2); // the x value and one series: failures alone
        expect(await series('LLM calls')).toBe(2);
        expect(await page.locator('[data-testid=chart][aria-label="LLM calls"] .u-legend').textContent()).toContain('calls · total 2');
        // 2 calls × (2000 × 3 + 500 × 12) / 1e6 = 0.024 EUR
        const tiles = await page.locator('.kpi').allTextContents();
        expect(tiles).toContain('0.02Cost (EUR)');
        expect(await page.locator('[data-testid=chart][aria-label="Cost"] .u-legend').textContent()).toContain('total 0.02');
        const rows = await page.locator('[data-testid=conversation-row]').allTextContents();
        expect(rows.join('\n')).toContain('alice@example.com');
        expect(rows.join('\n')).toContain('assistant: Your order 1001 has shipped.');
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, `dashboard-outcomes-${width}.png`), fullPage: true });
      });
      await page.close();
    });
  }

  it('the channel filter and a custom time range narrow the tiles and the list', async () => {
    const { page } = await openDashboard(1440);
    await withScreenshotOnFailure(page, 'dashboard-filters', async () => {
      const conversations = () => page.locator('.kpi').first().textContent();
      expect(await conversations()).toBe('2Conversations (24 h)');
      await page.locator('[data-testid=channel-filter]').selectOption('whatsapp');
      await expect.poll(() => page.locator('[data-testid=conversation-row]').count(), { timeout: 10_000 }).toBe(0);
      await expect.poll(conversations, { timeout: 10_000 }).toBe('0Conversations (24 h)');
      await page.locator('[data-testid=channel-filter]').selectOption('web');
      await expect.poll(() => page.locator('[data-testid=conversation-row]').count(), { timeout: 10_000 }).toBe(2);
      await expect.poll(conversations, { timeout: 10_000 }).toBe('2Conversations (24 h)');
      // a custom range ending an hour ago holds none of it
      const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
      await page.locator('[data-testid=range-from]').fill(local(Date.now() - 5 * 3600_000));
      await page.locator('[data-testid=range-to]').fill(local(Date.now() - 3600_000));
      const request = page.waitForRequest((r) => r.url().includes('/api/v1/telemetry/summary') && r.url().includes('channel=web'));
      await page.locator('[data-testid=range-form] button').click();
      const url = new URL((await request).url());
      expect(Number(url.searchParams.get('until'))).toBeLessThan(Date.now() - 3500_000);
      await expect.poll(conversations, { timeout: 10_000 }).toBe('0Conversations (custom range)');
      expect(await axeViolations(page)).toEqual([]);
    });
    await page.close();
  });
});
