// Issue 33, part 5, in real Chromium against the demo (the demo backend words cancelOrder per locale and gives its own
// receipts): the widget sends the browser's language in `init`, a Spanish customer's card is in Spanish, and an
// approved action the backend refuses shows a failure receipt — live and after a reload — never a green "approved".
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { restartDemoWidget } from '../support/demo-widget.ts';

const demo = useDemoParley({}, 60_000);
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
const connected = (page: Page) => expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');

/** The demo customer's widget started again with `options` (the same customer: the demo's cookie keeps it). */
async function restart(page: Page, options: Record<string, unknown>) {
  await restartDemoWidget(page, Object.assign({ open: true }, options));
  await connected(page);
}

async function ask(page: Page, text: string) {
  const cards = await page.locator('[data-testid=confirm]').count();
  await page.locator('[data-testid=input]').fill(text);
  await page.locator('[data-testid=input]').press('Enter');
  await expect.poll(() => page.locator('[data-testid=confirm]').count(), { timeout: 15_000 }).toBe(cards + 1);
  return page.locator('[data-testid=confirm]').last();
}

describe("the widget in the customer's language (real Chromium)", () => {
  it('a Spanish browser: init carries es-ES; the card reads "¿Cancelar el pedido 1001?"; a refused action\'s receipt says it failed, after a reload too', async () => {
    const context = await demo.browser.newContext({ locale: 'es-ES', viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-locale', async () => {
      const inits: Record<string, unknown>[] = [];
      page.on('websocket', (ws) =>
        ws.on('framesent', (f) => {
          const frame = JSON.parse(String(f.payload)) as Record<string, unknown>;
          if (frame.type === 'init') inits.push(frame);
        }),
      );
      await page.goto(`${demo.parley.url()}/demo.html`);
      // The demo page sets no locale: the browser's language goes to Parley.
      await expect.poll(() => inits.length, { timeout: 15_000 }).toBeGreaterThan(0);
      expect(inits[0].locale).toBe('es-ES');
      await restart(page, { locale: 'es' });
      expect(inits[inits.length - 1].locale).toBe('es');

      const card = await ask(page, 'cancel order 1001');
      expect(await card.locator('.question').textContent()).toBe('¿Cancelar el pedido 1001?');
      expect(await card.locator('.kicker').textContent()).toBe('Confirma, por favor');
      expect(await card.locator('[data-testid=approve]').textContent()).toBe('Aprobar');
      await shot(page, 'widget-locale-confirm-es');
      await card.locator('[data-testid=approve]').click();
      const done = page.locator('[data-testid=receipt]').first();
      await expect.poll(() => done.getAttribute('data-outcome'), { timeout: 15_000 }).toBe('done');
      expect(await done.locator('.what').textContent()).toBe('Pedido 1001 cancelado');

      const refused = await ask(page, 'cancel order 1002');
      expect(await refused.locator('.question').textContent()).toBe('¿Cancelar el pedido 1002?');
      await refused.locator('[data-testid=approve]').click();
      const failed = page.locator('[data-testid=receipt]').nth(1);
      // Approved first (neutral, not green), then the backend's refusal in its place.
      await expect.poll(() => failed.getAttribute('data-outcome'), { timeout: 15_000 }).toBe('failed');
      expect(await failed.locator('.what').textContent()).toBe('No se pudo cancelar el pedido 1002: ya se envió');
      expect(await failed.locator('.mark').textContent()).toBe('✕');
      const mark = await failed.locator('.mark').evaluate((n) => getComputedStyle(n).backgroundColor);
      expect(mark).toBe('rgb(214, 69, 69)'); // --pw-bad, never --pw-ok's green
      await expect.poll(() => page.locator('[data-testid=message][data-role=assistant]').count(), { timeout: 15_000 }).toBe(2);
      await shot(page, 'widget-locale-receipts-es');

      await page.reload();
      await restart(page, { locale: 'es' });
      const after = page.locator('[data-testid=receipt]');
      await expect.poll(() => after.count(), { timeout: 15_000 }).toBe(2);
      expect(await after.nth(0).getAttribute('data-outcome')).toBe('done');
      expect(await after.nth(1).getAttribute('data-outcome')).toBe('failed');
      expect(await after.nth(1).locator('.what').textContent()).toBe('No se pudo cancelar el pedido 1002: ya se envió');
      await shot(page, 'widget-locale-receipts-es-reloaded');
    });
    await context.close();
  });
});
