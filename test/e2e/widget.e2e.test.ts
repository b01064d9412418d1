// Issue 4: the demo in a real browser: launcher, Connecting → Connected, an
// order question, a cancellation with a confirmation prompt, history after a
// reload; hostile text is shown as text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createClient } from '../../sdk/src/index.ts';
import { launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';

let browser: Browser;
let parley: TestParley;

beforeAll(async () => {
  browser = await launchBrowser();
  parley = await startParley({ config: { demo: { backend: true }, identity: { allow_anonymous: false } } });
  // the demo backend connects after listen; wait for its two functions
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${parley.url()}/__test__/sdk/functions`).then((x) => x.json());
    if (r.includes('cancelOrder')) break;
    await new Promise((res) => setTimeout(res, 50));
  }
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await parley?.close();
});

describe('the demo page in Chromium', () => {
  it('connects, answers an order question, cancels with confirmation, keeps history after reload', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-demo', async () => {
      const statuses: string[] = [];
      await page.exposeFunction('__status', (s: string) => statuses.push(s));
      await page.goto(`${parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      const status = page.locator('[data-testid=status]');
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Connected');

      const input = page.locator('[data-testid=input]');
      await input.fill('What is the status of order 1001?');
      await input.press('Enter');
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(1);
      expect(await assistant.first().textContent()).toMatch(/1001.*processing|processing.*1001/s);

      await input.fill('Cancel order 1001');
      await page.locator('[data-testid=send]').click();
      const confirm = page.locator('[data-testid=confirm]');
      await confirm.waitFor({ timeout: 10_000 });
      expect(await confirm.textContent()).toContain('1001');
      await page.locator('[data-testid=approve]').click();
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(2);
      expect(await assistant.nth(1).textContent()).toMatch(/cancelled/i);

      await page.reload();
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Connected');
      await expect.poll(() => page.locator('[data-testid=message]').count(), { timeout: 10_000 }).toBe(4);
      const texts = await page.locator('[data-testid=message]').allTextContents();
      expect(texts.join('\n')).toContain('Cancel order 1001');
    });
    await context.close();
  });

  it('shows the status Connecting before Connected', async () => {
    const page = await browser.newPage();
    await withScreenshotOnFailure(page, 'widget-status', async () => {
      // Record every status text the widget shows, from the first paint on.
      await page.addInitScript(() => {
        (window as unknown as { __statuses: string[] }).__statuses = [];
        const seen = (window as unknown as { __statuses: string[] }).__statuses;
        const poll = () => {
          const host = document.getElementById('parley-widget');
          const s = host?.shadowRoot?.querySelector('[data-testid=status]')?.textContent;
          if (s && seen[seen.length - 1] !== s) seen.push(s);
          requestAnimationFrame(poll);
        };
        requestAnimationFrame(poll);
      });
      await page.goto(`${parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.evaluate(() => (window as unknown as { __statuses: string[] }).__statuses.at(-1)), { timeout: 10_000 }).toBe('Connected');
      const seen = await page.evaluate(() => (window as unknown as { __statuses: string[] }).__statuses);
      expect(seen[0]).toBe('Connecting');
    });
    await page.close();
  });

  it('assistant text with HTML is shown as text and runs nothing', async () => {
    const evil = createClient();
    evil.expose('getOrderStatus', { description: 'Get the status of an order', parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } }, async () => ({
      status: '<img src=x onerror="window.__xss=1">',
    }));
    await evil.listen({ url: parley.url(), secret: TEST_SECRET });
    const page = await browser.newPage();
    try {
      await withScreenshotOnFailure(page, 'widget-xss', async () => {
        await page.goto(`${parley.url()}/demo.html`);
        await page.locator('[data-testid=launcher]').click();
        await page.locator('[data-testid=input]').fill('status of order 1001');
        await page.locator('[data-testid=input]').press('Enter');
        const assistant = page.locator('[data-testid=message][data-role=assistant]').last();
        await expect.poll(() => assistant.textContent(), { timeout: 10_000 }).toContain('<img src=x onerror=');
        expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
        expect(await page.locator('[data-testid=messages] img').count()).toBe(0);
      });
    } finally {
      await page.close();
      await evil.close();
    }
  });
});
