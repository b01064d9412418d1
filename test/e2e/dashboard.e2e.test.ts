// Issue 7: the dashboard in real Chromium: asks for the secret, draws charts
// with data points, shows a conversation's timeline. Screenshot kept.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget } from '../support/widget-client.ts';

let browser: Browser;
let p: TestParley;
let sdk: ReturnType<typeof createClient>;

beforeAll(async () => {
  browser = await launchBrowser();
  p = await startParley({ config: { proactive: { enabled: true }, telemetry: { store_text: true } } });
  sdk = createClient();
  sdk.expose(
    'getOrderStatus',
    { description: 'Get the status of an order', parameters: z.object({ orderId: z.string() }) },
    async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
  );
  sdk.expose('cancelOrder', { description: 'Cancel an order', parameters: z.object({ orderId: z.string() }), mode: 'write' }, async () => {
    throw new Error('already shipped');
  });
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  // A long address left waiting for a confirmation: the widest row the recent-conversations table gets.
  const waiting = await connectWidget(p.url());
  waiting.send({ type: 'init', customerId: 'dash-0', email: 'a-customer-with-a-rather-long-address@support.example.com' });
  await waiting.next((f) => f.type === 'ready');
  waiting.send({ type: 'message', id: '1', text: 'cancel order 1002' });
  await waiting.next((f) => f.type === 'confirm');
  waiting.close();
  const w = await connectWidget(p.url());
  w.send({ type: 'init', customerId: 'dash-1', email: 'd@example.com' });
  await w.next((f) => f.type === 'ready');
  w.send({ type: 'message', id: '1', text: 'status of order 1001' });
  await w.next((f) => f.type === 'message');
  w.send({ type: 'message', id: '2', text: 'cancel order 1001' });
  const c = await w.next((f) => f.type === 'confirm');
  w.send({ type: 'confirm', id: c.id, approve: true });
  await w.next((f) => f.type === 'message');
  w.close();
  // Proactive: one blocked (not opted in), then one accepted.
  const proactive = (path: string, body: unknown) =>
    fetch(`${p.url()}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  expect(await (await proactive('/proactive', { customerExternalId: 'anon:dash-1', channel: 'web', content: 'Shipped' })).json()).toMatchObject({
    accepted: false,
  });
  await proactive('/proactive/opt-in', { customerExternalId: 'anon:dash-1', optIn: true });
  expect(await (await proactive('/proactive', { customerExternalId: 'anon:dash-1', channel: 'web', content: 'Shipped' })).json()).toMatchObject({
    accepted: true,
  });
  await p.services.telemetry.flush();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await sdk?.close();
  await p?.close();
});

describe('/telemetry dashboard in Chromium', () => {
  it('asks for the secret, then shows charts with data points and a conversation timeline', async () => {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    const requestsOutside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(p.url())) requestsOutside.push(r.url());
    });
    await withScreenshotOnFailure(page, 'dashboard', async () => {
      await page.goto(`${p.url()}/telemetry`);
      await page.locator('[data-testid=secret-form]').waitFor();
      await page.locator('[data-testid=secret-input]').fill('wrong-secret');
      await page.locator('[data-testid=secret-input]').press('Enter');
      await expect.poll(() => page.locator('[role=alert]').textContent(), { timeout: 15_000 }).toContain('refused');
      await page.locator('[data-testid=secret-input]').fill(TEST_SECRET);
      await page.locator('[data-testid=secret-input]').press('Enter');
      const charts = page.locator('[data-testid=chart]');
      await expect.poll(() => charts.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(6);
      // Points uPlot actually drew (set by its draw hook), per time-series chart.
      const drawn = (title: string) => page.locator(`[data-testid=chart][aria-label="${title}"]`).getAttribute('data-drawn').then(Number);
      await expect.poll(() => drawn('Messages per channel'), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      expect(await drawn('LLM latency (p50 / p95)')).toBeGreaterThanOrEqual(2);
      expect(await drawn('Tokens per model')).toBeGreaterThanOrEqual(1);
      // accepted and blocked: one point each, as two series
      expect(await drawn('Proactive: accepted vs blocked by reason')).toBe(2);
      expect(await page.locator('[data-testid=chart][aria-label^="Proactive"] .u-legend').textContent()).toContain('blocked: Customer has not opted in');
      expect(await drawn('Tool failures')).toBeGreaterThanOrEqual(1);
      expect(await page.locator('[data-testid=chart] canvas').count()).toBeGreaterThanOrEqual(5);
      const row = page.locator('[data-testid=conversation-row]').first();
      await row.waitFor();
      await row.click();
      await page.locator('[data-testid=timeline]').waitFor();
      const entries = await page.locator('[data-testid=timeline-entry]').allTextContents();
      expect(entries.join('\n')).toContain('tool.failed');
      expect(entries.join('\n')).toMatch(/llm #1/);
      expect(entries.join('\n')).toContain('confirmation.approved');
      // the secret stays in this tab's sessionStorage only
      expect(await page.evaluate(() => sessionStorage.getItem('parley.secret'))).toBe(TEST_SECRET);
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
      expect(requestsOutside).toEqual([]);
    });
    await page.close();
  });

  for (const width of [800, 1280, 1440]) {
    it(`at ${width} px: charts fill their cards, the table fits or scrolls inside its card, the window selector, a timeline in order`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await withScreenshotOnFailure(page, `dashboard-${width}`, async () => {
        await page.goto(`${p.url()}/telemetry`);
        await page.evaluate((s) => sessionStorage.setItem('parley.secret', s), TEST_SECRET);
        await page.reload();
        const charts = page.locator('[data-testid=chart]');
        await expect.poll(() => page.locator('[data-testid=chart] canvas').count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
        // every drawn chart is as wide as its card's content box (within a pixel or two)
        const fit = () =>
          page.evaluate(() =>
            [...document.querySelectorAll('[data-testid=chart]')]
              .filter((c) => c.querySelector('.uplot'))
              .map((c) => {
                const body = c.querySelector('.chart-body') as HTMLElement;
                const legend = c.querySelector('.u-legend') as HTMLElement;
                // the drawing as wide as the card's content; the legend wraps inside it
                return {
                  body: body.clientWidth,
                  plot: (c.querySelector('.u-wrap') as HTMLElement).offsetWidth,
                  legend: legend.scrollWidth <= body.clientWidth,
                };
              }),
          );
        // (polled: the page's scrollbar appears once the charts are in, and the charts follow one frame later)
        await expect.poll(async () => (await fit()).filter((f) => Math.abs(f.body - f.plot) > 2 || !f.legend), { timeout: 15_000 }).toEqual([]);
        expect((await fit()).length).toBeGreaterThanOrEqual(5);
        // and they follow the window when it is resized: the same plots (refreshes update them in place), new sizes
        await page.evaluate(() => document.querySelectorAll('.uplot').forEach((u) => u.setAttribute('data-seen', '')));
        await page.setViewportSize({ width: width - 150, height: 900 });
        await expect.poll(async () => (await fit()).filter((f) => Math.abs(f.body - f.plot) > 2 || !f.legend), { timeout: 15_000 }).toEqual([]);
        expect(await page.locator('.uplot:not([data-seen])').count()).toBe(0);
        await page.setViewportSize({ width, height: 900 });
        // legends say the values: a total per series, without hovering
        expect(await page.locator('[data-testid=chart][aria-label="Messages per channel"] .u-legend').textContent()).toMatch(/web in · total \d+/);
        expect(await page.locator('[data-testid=chart][aria-label^="LLM latency"] .u-legend').textContent()).toMatch(/p95 · peak \d+ ms/);
        // the recent-conversations table never overflows its card
        const table = await page.evaluate(() => {
          const card = document.querySelector('[aria-label="Recent conversations"]') as HTMLElement;
          const wrap = card.querySelector('.table-wrap') as HTMLElement;
          return { card: card.getBoundingClientRect().right, wrap: wrap.getBoundingClientRect().right, scroll: wrap.scrollWidth, client: wrap.clientWidth };
        });
        expect(table.wrap).toBeLessThanOrEqual(table.card);
        if (width >= 1280) expect(table.scroll).toBeLessThanOrEqual(table.client);

        // the window selector: 1 h is pressed, asks the API for one hour in one-minute buckets, and keeps the choice
        const summaryRequest = page.waitForRequest((r) => r.url().includes('/api/v1/telemetry/summary') && r.url().includes('bucketMs=60000'));
        await page.locator('[data-window="1h"]').click();
        const url = new URL((await summaryRequest).url());
        expect(Number(url.searchParams.get('until')) - Number(url.searchParams.get('since'))).toBe(3600_000);
        expect(await page.locator('[data-window="1h"]').getAttribute('aria-pressed')).toBe('true');
        await expect.poll(() => page.locator('.kpi .label').first().textContent(), { timeout: 15_000 }).toBe('Conversations (1 h)');
        await expect.poll(() => charts.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(6);

        // a real conversation's timeline: the message, the tool calls, the confirmation, the answer — in order
        await page.locator('[data-testid=conversation-row]').first().click();
        await page.locator('[data-testid=timeline]').waitFor();
        const kinds = await page.locator('[data-testid=timeline-entry]').evaluateAll((n) => n.map((e) => e.getAttribute('data-kind')));
        const at = (k: string) => kinds.indexOf(k);
        for (const k of ['message.in', 'tool.invoked', 'confirmation.requested', 'confirmation.approved', 'tool.failed', 'message.out'])
          expect(at(k), `${k} in ${kinds.join(',')}`).toBeGreaterThanOrEqual(0);
        expect(at('confirmation.requested')).toBeLessThan(at('confirmation.approved'));
        expect(kinds.lastIndexOf('tool.invoked')).toBeLessThan(at('tool.failed'));
        const text = (await page.locator('[data-testid=timeline]').textContent()) ?? '';
        // store_text is on in this test: the words are there
        expect(text).toContain('customer: “cancel order 1001”');
        expect(text).toContain('asked the customer to confirm cancelOrder: “Cancel order 1001”');
        await page.waitForTimeout(300);
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, `dashboard-${width}.png`), fullPage: true });
      });
      await page.close();
    });
  }
});
