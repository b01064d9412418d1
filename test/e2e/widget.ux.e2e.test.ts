// Issue 21: the widget as customers meet it, in real Chromium: a 375 px phone (Send is never covered, the
// input does not zoom), timestamps, confirmation receipts, theming (accent, dark, left), Spanish, data-*
// attributes, plain-language errors and a fresh session token without a reload. Screenshots kept in
// test-artifacts/ (widget-*.png).
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';

const demo = useDemoParley();
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

/** The demo page, with the widget started again by `Parley.init(options)` (a fresh demo customer). */
async function widgetPage(page: Page, options: Record<string, unknown>, extra = '') {
  await page.goto(`${demo.parley.url()}/demo.html`);
  await page.waitForFunction(() => (window as unknown as { Parley?: { instance?: unknown } }).Parley?.instance);
  await page.evaluate(
    async ([opts, extraCode]) => {
      const w = window as unknown as { Parley: { instance: { destroy(): void }; init(o: unknown): { destroy(): void } } };
      w.Parley.instance.destroy();
      const s = await fetch('/demo/session').then((r) => r.json());
      const more = extraCode ? (new Function('s', extraCode)(s) as Record<string, unknown>) : {};
      w.Parley.instance = w.Parley.init(Object.assign({ serverUrl: s.serverUrl, customerId: s.customerId, authToken: s.authToken }, opts, more));
    },
    [options, extra] as const,
  );
}

const connected = (page: Page) => expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 10_000 }).toBe('Connected');
const css = (page: Page, selector: string, prop: string) =>
  page.evaluate(
    ([sel, p]) => {
      const root = document.getElementById('parley-widget')!.shadowRoot!;
      const node = sel === ':host' ? document.getElementById('parley-widget')! : root.querySelector(sel)!;
      return getComputedStyle(node).getPropertyValue(p);
    },
    [selector, prop] as const,
  );

describe('the widget on a 375 px phone', () => {
  it('tapping Send sends and keeps the panel open; nothing covers the controls; 16 px input; a timestamp shows', async () => {
    const context = await demo.browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-phone', async () => {
      await widgetPage(page, {});
      await page.locator('[data-testid=launcher]').tap();
      await connected(page);
      const panel = page.locator('[data-testid=panel]');
      expect(await panel.boundingBox()).toMatchObject({ x: 0, y: 0, width: 375, height: 667 });
      // What a finger at the centre of Send (and of the input) hits is Send (the input): not the launcher.
      const hit = (testid: string) =>
        page.evaluate((id) => {
          const root = document.getElementById('parley-widget')!.shadowRoot!;
          const r = root.querySelector(`[data-testid=${id}]`)!.getBoundingClientRect();
          return root
            .elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)
            ?.closest('[data-testid]')
            ?.getAttribute('data-testid');
        }, testid);
      expect(await hit('send')).toBe('send');
      expect(await hit('input')).toBe('input');
      expect(parseFloat(await css(page, 'textarea', 'font-size'))).toBeGreaterThanOrEqual(16);

      await page.locator('[data-testid=input]').fill('What is the status of order 1001?');
      await page.locator('[data-testid=send]').tap();
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(1);
      expect(await panel.isVisible()).toBe(true);
      expect(await page.locator('[data-testid=message][data-role=user]').count()).toBe(1);
      const time = assistant.locator('[data-testid=time]');
      expect(await time.isVisible()).toBe(true);
      expect(await time.textContent()).toBe('just now');
      // the exact time on hover (a tooltip drawn from data-exact) and for screen readers; a time is not a tab stop
      const exact = await time.getAttribute('data-exact');
      expect(exact).toMatch(/\d{4}/);
      expect(await time.getAttribute('aria-label')).toBe(exact);
      expect(await time.getAttribute('tabindex')).toBeNull();
      // the tooltip is the exact time (drawn by CSS from data-exact, shown on hover)
      const tooltip = await time.evaluate((t) => getComputedStyle(t, '::after').getPropertyValue('content'));
      expect(tooltip).toBe(JSON.stringify(exact));
      await shot(page, 'widget-phone');
      // closing gives the launcher back
      await page.locator('.close').tap();
      expect(await page.locator('[data-testid=launcher]').isVisible()).toBe(true);
    });
    await context.close();
  });
});

describe('the widget on a desktop page', () => {
  it('a confirmation card asks in words and stays in the transcript as a receipt, also after a reload', async () => {
    const page = await demo.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await withScreenshotOnFailure(page, 'widget-receipt', async () => {
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await connected(page);
      await page.locator('[data-testid=input]').fill('Cancel order 1001');
      await page.locator('[data-testid=input]').press('Enter');
      const card = page.locator('[data-testid=confirm]');
      await card.waitFor({ timeout: 10_000 });
      expect(await card.locator('.question').textContent()).toBe('Cancel order 1001?');
      await shot(page, 'widget-confirm');
      await page.locator('[data-testid=approve]').click();
      const receipt = page.locator('[data-testid=receipt]');
      // Approved, then what the backend did in its place (issue 33): its own words for a success.
      await expect.poll(() => receipt.textContent(), { timeout: 10_000 }).toContain('Order 1001 cancelled');
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(1);
      expect(await assistant.textContent()).toMatch(/cancelled/i);
      expect(await receipt.isVisible()).toBe(true);
      expect(await receipt.getAttribute('data-outcome')).toBe('done');
      await shot(page, 'widget-receipt');
      await page.reload();
      await page.locator('[data-testid=launcher]').click();
      await connected(page);
      await expect.poll(() => page.locator('[data-testid=receipt]').textContent(), { timeout: 10_000 }).toContain('Order 1001 cancelled');
      // in order: the request, the receipt, the answer
      const order = await page.evaluate(() =>
        [...document.getElementById('parley-widget')!.shadowRoot!.querySelectorAll('[data-testid=message], [data-testid=receipt]')].map(
          (n) => n.getAttribute('data-role') ?? 'receipt',
        ),
      );
      expect(order).toEqual(['user', 'receipt', 'assistant']);
    });
    await page.close();
  });

  it('theme.accent colours the launcher; colorScheme dark darkens the panel; position left; title and subtitle', async () => {
    const page = await demo.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await withScreenshotOnFailure(page, 'widget-theme', async () => {
      await widgetPage(page, {});
      await page.locator('[data-testid=launcher]').click();
      const lightBg = await css(page, '[data-testid=panel]', 'background-color');
      const defaultLauncher = await css(page, '[data-testid=launcher]', 'background-color');
      expect(lightBg).toBe('rgb(255, 255, 255)');

      await widgetPage(page, { theme: { accent: '#e11d48', colorScheme: 'dark', position: 'left', title: 'Acme help', subtitle: 'Replies in seconds' } });
      expect(await css(page, '[data-testid=launcher]', 'background-color')).toBe('rgb(225, 29, 72)');
      expect(defaultLauncher).not.toBe('rgb(225, 29, 72)');
      await page.locator('[data-testid=launcher]').click();
      await connected(page);
      expect(await css(page, '[data-testid=panel]', 'background-color')).toBe('rgb(17, 24, 39)');
      expect(await css(page, ':host', 'left')).toBe('20px');
      expect(await page.locator('[data-testid=title]').textContent()).toBe('Acme help');
      expect(await page.locator('[data-testid=subtitle]').textContent()).toBe('Replies in seconds');
      // white text on the rose accent (the better contrast)
      expect(await css(page, '.head', 'color')).toBe('rgb(255, 255, 255)');
      await page.locator('[data-testid=input]').fill('What is the status of order 1002?');
      await page.locator('[data-testid=input]').press('Enter');
      await page.locator('[data-testid=message][data-role=assistant]').waitFor({ timeout: 10_000 });
      await shot(page, 'widget-dark');

      // a pale accent gets dark text; a value that is no colour is ignored (and said in the console)
      const warnings: string[] = [];
      page.on('console', (m) => warnings.push(m.text()));
      await widgetPage(page, { theme: { accent: '#fde047' } });
      expect(await css(page, '.head', 'color')).toBe('rgb(17, 24, 39)');
      await widgetPage(page, { theme: { accent: 'not a colour' } });
      expect(await css(page, '[data-testid=launcher]', 'background-color')).toBe(defaultLauncher);
      expect(warnings.join('\n')).toContain('theme.accent');
    });
    await page.close();
  });

  it('colorScheme auto follows the system setting', async () => {
    const page = await demo.browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' });
    await widgetPage(page, { theme: { colorScheme: 'auto' } });
    await page.locator('[data-testid=launcher]').click();
    expect(await css(page, '[data-testid=panel]', 'background-color')).toBe('rgb(17, 24, 39)');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await css(page, '[data-testid=panel]', 'background-color')).toBe('rgb(255, 255, 255)');
    await page.close();
  });

  it("locale 'es' speaks Spanish, strings replace single texts", async () => {
    const page = await demo.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await withScreenshotOnFailure(page, 'widget-es', async () => {
      await widgetPage(page, { locale: 'es', strings: { subtitle: 'Respondemos al momento' } });
      expect(await page.locator('[data-testid=launcher]').getAttribute('aria-label')).toBe('Abrir chat');
      await page.locator('[data-testid=launcher]').click();
      await connected(page);
      expect(await page.locator('[data-testid=status]').textContent()).toBe('En línea');
      expect(await page.locator('[data-testid=title]').textContent()).toBe('Soporte');
      expect(await page.locator('[data-testid=subtitle]').textContent()).toBe('Respondemos al momento');
      expect(await page.locator('[data-testid=input]').getAttribute('placeholder')).toBe('Escribe tu mensaje…');
      expect(await page.locator('[data-testid=send]').getAttribute('aria-label')).toBe('Enviar');
      expect(await page.locator('[data-testid=welcome]').textContent()).toBe('¡Hola! ¿En qué podemos ayudarte hoy?');
      await page.locator('[data-testid=input]').fill('Cancel order 1001');
      await page.locator('[data-testid=input]').press('Enter');
      await page.locator('[data-testid=confirm]').waitFor({ timeout: 10_000 });
      expect(await page.locator('[data-testid=approve]').textContent()).toBe('Aprobar');
      // The card in the customer's language too (issue 33: the demo backend words cancelOrder per locale).
      expect(await page.locator('[data-testid=confirm] .question').textContent()).toBe('¿Cancelar el pedido 1001?');
      await page.locator('[data-testid=decline]').click();
      await expect.poll(() => page.locator('[data-testid=receipt]').textContent()).toContain('Rechazaste: Cancelar el pedido 1001');
      expect(await page.locator('[data-testid=time]').first().textContent()).toBe('ahora mismo');
      await shot(page, 'widget-es');
    });
    await page.close();
  });

  it('the script tag alone: data-accent, data-locale, data-position, data-color-scheme', async () => {
    const session = await fetch(`${demo.parley.url()}/demo/session`).then((r) => r.json());
    // A host page on its own origin (a local server: Chromium keeps pages it did not load from a socket off loopback).
    const html = `<!doctype html><html><body><script src="${demo.parley.url()}/widget.js" data-customer-id="${session.customerId}"
      data-auth-token="${session.authToken}" data-accent="rgb(5, 150, 105)" data-locale="es" data-position="left" data-color-scheme="dark"
      data-title="Ayuda"></script></body></html>`;
    const site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    const page = await demo.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    await page.locator('[data-testid=launcher]').click();
    await connected(page);
    expect(await css(page, '[data-testid=launcher]', 'background-color')).toBe('rgb(5, 150, 105)');
    expect(await css(page, '[data-testid=panel]', 'background-color')).toBe('rgb(17, 24, 39)');
    expect(await css(page, ':host', 'left')).toBe('20px');
    expect(await page.locator('[data-testid=status]').textContent()).toBe('En línea');
    expect(await page.locator('[data-testid=title]').textContent()).toBe('Ayuda');
    await page.close();
    site.close();
  });

  it('a refused token: plain words for the customer, the code in the console, the input disabled; onAuthExpired reconnects', async () => {
    const page = await demo.browser.newPage({ viewport: { width: 1280, height: 800 } });
    const consoleLines: string[] = [];
    page.on('console', (m) => consoleLines.push(m.text()));
    await withScreenshotOnFailure(page, 'widget-auth', async () => {
      await widgetPage(page, { authToken: 'v1.bogus.token' });
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 10_000 }).toBe('Disconnected');
      const notice = page.locator('[data-testid=notice]');
      expect(await notice.textContent()).toBe('Your session has ended. Please reload the page to keep chatting.');
      const visible = await page.evaluate(() => document.getElementById('parley-widget')!.shadowRoot!.querySelector('.panel')!.textContent);
      expect(visible).not.toMatch(/unauthorized|refused|bad_signature|token/i);
      expect(consoleLines.join('\n')).toMatch(/\[parley\] unauthorized: Session token refused/);
      expect(await page.locator('[data-testid=input]').isDisabled()).toBe(true);
      expect(await page.locator('[data-testid=send]').isDisabled()).toBe(true);
      await shot(page, 'widget-session-ended');

      // onAuthExpired hands over a fresh token: connected again, no reload
      await widgetPage(page, { authToken: 'v1.bogus.token' }, 'return { onAuthExpired: async () => s.authToken }');
      await page.locator('[data-testid=launcher]').click();
      await connected(page);
      expect(await page.locator('[data-testid=input]').isDisabled()).toBe(false);
      expect(await page.locator('[data-testid=notice]').isHidden()).toBe(true);
    });
    await page.close();
  });
});
