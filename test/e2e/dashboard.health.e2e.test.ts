// The dashboard's backend health after a failure a customer met in the demo (Chromium): the customer approves the
// cancel of order 1002, which the demo backend refuses (already shipped); the dashboard's Errors tile counts what
// its Latest errors list shows (it said 0 beside a listed failure), and Function failures counts it too.
import { describe, expect, it } from 'vitest';
import { withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { TEST_SECRET } from '../support/parley.ts';

const SLOW = 30_000;
const demo = useDemoParley();

describe('the dashboard after a refused action', () => {
  it('the Errors tile counts the failure its Latest errors list shows', async () => {
    const chat = await demo.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await withScreenshotOnFailure(chat, 'dashboard-health-chat', async () => {
      await chat.goto(`${demo.parley.url()}/demo.html`);
      await chat.locator('[data-testid=launcher]').click();
      await expect.poll(() => chat.locator('[data-testid=status]').textContent(), { timeout: SLOW }).toBe('Online');
      await chat.locator('[data-testid=input]').fill('Cancel order 1002');
      await chat.locator('[data-testid=input]').press('Enter');
      await chat.locator('[data-testid=approve]').click({ timeout: SLOW });
      await expect.poll(() => chat.locator('[data-testid=receipt]').textContent(), { timeout: SLOW }).toMatch(/Could not cancel order 1002/);
    });
    await chat.close();

    const page = await demo.browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await withScreenshotOnFailure(page, 'dashboard-health', async () => {
      await page.goto(`${demo.parley.url()}/telemetry`);
      await page.evaluate((s) => sessionStorage.setItem('parley.secret', s), TEST_SECRET);
      await page.reload();
      const rows = page.locator('[data-testid=error-row]');
      await expect.poll(() => rows.count(), { timeout: SLOW }).toBe(1);
      expect(await rows.first().textContent()).toContain('tool_failed');
      const value = (id: string) => page.locator(`[data-testid=${id}] .value`).textContent();
      expect(await value('tile-invoke-failures')).toBe('1');
      expect(await value('tile-errors')).toBe('1');
    });
    await page.close();
  });
});
