// Issues 20 + 21 together, in real Chromium: a streamed reply in the redesigned widget with a brand accent, the
// Spanish locale, light and dark. The animated typing dots show until the first words; the growing bubble has the
// look of a support message (no time yet, a caret after the last word, hidden from screen readers); the final
// message takes its place in the log, with its time in Spanish. Screenshots kept in test-artifacts/ (widget-streaming-{light,dark}{,-final}.png).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useChromiumParley } from '../support/chromium-parley.ts';

const REPLY = 'Tu pedido 1001 ya está empaquetado y sale hoy de nuestro almacén; debería llegarte el viernes por la mañana.';

const e2e = useChromiumParley({ demo: { backend: true }, identity: { allow_anonymous: false } });
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

/** What the log looked like at one moment (recorded in the page at every change). */
interface Moment {
  typingShown: boolean;
  dotsAnimated: boolean;
  streaming: { text: string; hidden: string | null; times: number; background: string; radius: string; caret: string } | null;
  finals: number;
}

/** The demo page with the widget started again by `Parley.init(options)`, recording every change of its log. */
async function themedWidget(page: Page, options: Record<string, unknown>) {
  await page.goto(`${e2e.parley.url()}/demo.html`);
  await page.waitForFunction(() => (window as unknown as { Parley?: { instance?: unknown } }).Parley?.instance);
  await page.evaluate(async (opts) => {
    const w = window as unknown as {
      Parley: { instance: { destroy(): void }; init(o: unknown): { destroy(): void } };
      __moments: Moment[];
      __replaced: { removed: string; added: string }[];
    };
    w.Parley.instance.destroy();
    w.__moments = [];
    w.__replaced = [];
    const s = await fetch('/demo/session').then((r) => r.json());
    w.Parley.instance = w.Parley.init(Object.assign({ serverUrl: s.serverUrl, customerId: s.customerId, authToken: s.authToken }, opts));
    // The Spanish words are fetched before the widget appears (widget/src/locales.ts): wait until it is there.
    const shown = () => document.getElementById('parley-widget')?.shadowRoot?.querySelector('[data-testid=messages]');
    for (const giveUp = Date.now() + 15_000; !shown() && Date.now() < giveUp;) await new Promise((r) => setTimeout(r, 20));
    const root = document.getElementById('parley-widget')!.shadowRoot!;
    const log = root.querySelector('[data-testid=messages]')!;
    new MutationObserver((mutations) => {
      for (const m of mutations) {
        // One mutation that takes the streamed row out and puts a message row in its place.
        const removed = [...m.removedNodes].find((n) => n instanceof HTMLElement && n.dataset.testid === 'streaming') as HTMLElement | undefined;
        const added = [...m.addedNodes].find((n) => n instanceof HTMLElement && n.dataset.testid === 'message') as HTMLElement | undefined;
        if (m.target === log && removed && added)
          w.__replaced.push({ removed: removed.textContent ?? '', added: added.querySelector('.text')?.textContent ?? '' });
      }
      const typing = root.querySelector<HTMLElement>('[data-testid=typing]')!;
      const row = root.querySelector<HTMLElement>('[data-testid=streaming]');
      const bubble = row?.querySelector('.msg');
      w.__moments.push({
        typingShown: !typing.hidden && getComputedStyle(typing).display !== 'none',
        dotsAnimated: [...typing.querySelectorAll('i')].every((i) => getComputedStyle(i).animationName === 'pw-bounce'),
        streaming:
          row && bubble
            ? {
                text: bubble.textContent ?? '',
                hidden: row.getAttribute('aria-hidden'),
                times: row.querySelectorAll('time').length,
                background: getComputedStyle(bubble).backgroundColor,
                radius: getComputedStyle(bubble).borderBottomLeftRadius,
                caret: getComputedStyle(bubble.querySelector('.text')!, '::after').animationName,
              }
            : null,
        finals: root.querySelectorAll('[data-testid=message][data-role=assistant]').length,
      });
    }).observe(log, { subtree: true, childList: true, characterData: true, attributes: true });
  }, options);
}

describe('a streamed reply in the redesigned widget (accent, Spanish)', () => {
  for (const scheme of ['light', 'dark'] as const) {
    it(`${scheme}: dots until the first words, a themed growing bubble, then the final message in its place`, async () => {
      // The model thinks 900 ms (the dots), then writes a word every 140 ms.
      e2e.llm.fallback({ text: REPLY, delayMs: 900, chunkDelayMs: 140 });
      const page = await e2e.browser.newPage({ viewport: { width: 1280, height: 800 } });
      await withScreenshotOnFailure(page, `widget-streaming-${scheme}`, async () => {
        await themedWidget(page, { locale: 'es', theme: { accent: '#0f766e', colorScheme: scheme, title: 'Ayuda Acme' } });
        await page.locator('[data-testid=launcher]').click();
        await expect.poll(() => page.locator('[data-testid=status]').textContent(), { timeout: 10_000 }).toBe('En línea');
        await page.locator('[data-testid=input]').fill('¿Dónde está mi pedido 1001?');
        await page.locator('[data-testid=input]').press('Enter');

        // The dots first, animated, in Spanish for screen readers.
        const typing = page.locator('[data-testid=typing]');
        await typing.waitFor({ state: 'visible', timeout: 10_000 });
        expect(await typing.textContent()).toBe('Soporte está escribiendo…');

        // Then the words, growing in a bubble dressed as a support message.
        const streaming = page.locator('[data-testid=streaming]');
        await expect.poll(() => streaming.locator('.text').textContent(), { timeout: 10_000 }).toMatch(/^Tu pedido 1001 ya está empaquetado y sale/);
        expect(await typing.isVisible()).toBe(false);
        expect(await streaming.getAttribute('data-role')).toBe('assistant');
        await page.screenshot({ path: join(ARTIFACTS, `widget-streaming-${scheme}.png`) });

        const assistant = page.locator('[data-testid=message][data-role=assistant]');
        await expect.poll(() => assistant.count(), { timeout: 15_000 }).toBe(1);
        expect(await streaming.count()).toBe(0);
        expect(await assistant.locator('.text').textContent()).toBe(REPLY);
        expect(await assistant.locator('[data-testid=time]').textContent()).toBe('ahora mismo');
        expect(await typing.isVisible()).toBe(false);
        await page.screenshot({ path: join(ARTIFACTS, `widget-streaming-${scheme}-final.png`) });

        const final = await page.evaluate(() => {
          const root = document.getElementById('parley-widget')!.shadowRoot!;
          const bubble = root.querySelector('[data-testid=message][data-role=assistant] .msg')!;
          const panel = root.querySelector('[data-testid=panel]')!;
          return {
            background: getComputedStyle(bubble).backgroundColor,
            radius: getComputedStyle(bubble).borderBottomLeftRadius,
            caret: getComputedStyle(bubble.querySelector('.text')!, '::after').content,
            panel: getComputedStyle(panel).backgroundColor,
            head: getComputedStyle(root.querySelector('.head')!).backgroundColor,
          };
        });
        expect(final.head).toBe('rgb(15, 118, 110)');
        expect(final.caret).toBe('none');
        expect(final.panel).toBe(scheme === 'dark' ? 'rgb(17, 24, 39)' : 'rgb(255, 255, 255)');

        const moments = await page.evaluate(() => (window as unknown as { __moments: Moment[] }).__moments);
        const firstWords = moments.findIndex((m) => m.streaming !== null);
        expect(firstWords).toBeGreaterThan(0);
        // animated dots before the first words...
        expect(moments.slice(0, firstWords).some((m) => m.typingShown && m.dotsAnimated)).toBe(true);
        // ...and none once they show; the growing bubble looks like the final message, has no time but a blinking
        // caret, is hidden from screen readers, and only ever grows
        const writing = moments.filter((m) => m.streaming !== null).map((m) => m.streaming!);
        for (const [i, m] of moments.entries()) if (m.streaming) expect(moments[i].typingShown).toBe(false);
        expect(
          writing.every(
            (w) => w.hidden === 'true' && w.times === 0 && w.caret === 'pw-caret' && w.background === final.background && w.radius === final.radius,
          ),
        ).toBe(true);
        const texts = [...new Set(writing.map((w) => w.text))];
        expect(texts.length).toBeGreaterThanOrEqual(5);
        for (const [i, t] of texts.entries()) {
          expect(REPLY.startsWith(t)).toBe(true);
          if (i > 0) expect(t.length).toBeGreaterThan(texts[i - 1].length);
        }
        expect(moments.filter((m) => m.streaming !== null).every((m) => m.finals === 0)).toBe(true);
        // the final message took the streamed row's place, in one step
        const replaced = await page.evaluate(() => (window as unknown as { __replaced: { removed: string; added: string }[] }).__replaced);
        expect(replaced).toEqual([{ removed: REPLY, added: REPLY }]);
      });
      await page.close();
    });
  }
});
