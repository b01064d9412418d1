// A keyboard-only customer, in real Chromium: every control the Tab key reaches in the widget shows a focus ring that
// stands out from what is behind it (WCAG 1.4.11: at least 3:1) — the launcher on the page, × on the brand-coloured
// header, "Yes"/"No" on the log, Approve/Decline on the card, the input — with the default blue accent and with a light
// yellow one. The amber ring alone was 1.8:1 on white (and 1.1:1 on a yellow header): it now has a dark inner ring, so
// one of the two colours always contrasts; the input's ring and a proactive message's "Update" tag use the accent only
// where it contrasts with the panel. axe-core finds no violations. Screenshots: test-artifacts/widget-focus-*.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { restartDemoWidget } from '../support/demo-widget.ts';
import { axeViolations } from '../support/axe.ts';
import { TEST_SECRET } from '../support/parley.ts';

const demo = useDemoParley({ proactive: { enabled: true } }, 60_000);

const api = async (path: string, body: unknown) =>
  (
    await fetch(`${demo.parley.url()}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  ).status;
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

/**
 * The focused control (inside the widget, or the launcher) and how well its ring stands out: the best contrast of the
 * ring's solid colours (the outline, and box-shadows without blur) with the first opaque background behind it.
 */
const ring = (page: Page) =>
  page.evaluate(() => {
    const root = document.querySelector('#parley-widget')!.shadowRoot!;
    const el = root.activeElement as HTMLElement | null;
    if (!el) return { testid: 'none', contrast: 0 };
    const rgb = (c: string) => {
      const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c);
      return m ? { v: [m[1], m[2], m[3]].map(Number), a: m[4] === undefined ? 1 : Number(m[4]) } : undefined;
    };
    const lum = (v: number[]) =>
      v
        .map((x) => x / 255)
        .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
        .reduce((s, c, i) => s + c * [0.2126, 0.7152, 0.0722][i], 0);
    const ratio = (a: number[], b: number[]) => {
      const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
      return (x + 0.05) / (y + 0.05);
    };
    const cs = getComputedStyle(el);
    const colours: number[][] = [];
    const outline = rgb(cs.outlineColor);
    if (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2 && outline?.a === 1) colours.push(outline.v);
    for (const shadow of cs.boxShadow === 'none' ? [] : cs.boxShadow.split(/,(?![^(]*\))/)) {
      const c = rgb(shadow);
      const px = (shadow.replace(/rgba?\([^)]*\)/, '').match(/-?[\d.]+px/g) ?? []).map(parseFloat);
      if (c?.a === 1 && (px[2] ?? 0) === 0 && (px[3] ?? 0) >= 1) colours.push(c.v);
    }
    // The first opaque background behind the control, through the shadow root to the page.
    let bg: number[] = [255, 255, 255];
    for (let n: Element | null = el.parentElement ?? (el.getRootNode() as ShadowRoot).host; n;) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c && c.a === 1) {
        bg = c.v;
        break;
      }
      n = n.parentElement ?? ((n.getRootNode() as ShadowRoot).host || null);
    }
    return { testid: el.dataset.testid ?? el.className, contrast: Math.round(Math.max(0, ...colours.map((c) => ratio(c, bg))) * 10) / 10 };
  });

/** Asks `text`, waits for `shown`, then walks `steps` Shift+Tabs back from the input: each stop's ring (a screenshot after the second). */
async function ringsBackFromInput(page: Page, text: string, shown: string, steps: number, screenshot: string) {
  const input = page.locator('[data-testid=input]');
  await input.fill(text);
  await input.press('Enter');
  await page.locator(`[data-testid=${shown}]`).waitFor({ timeout: 30_000 });
  await input.focus();
  const rings: Awaited<ReturnType<typeof ring>>[] = [];
  for (let i = 0; i < steps; i++) {
    await page.keyboard.press('Shift+Tab');
    rings.push(await ring(page));
    if (i === 1) await page.screenshot({ path: join(ARTIFACTS, `${screenshot}.png`) });
  }
  return rings;
}

async function widget(page: Page, theme: Record<string, unknown>) {
  await page.goto(`${demo.parley.url()}/demo.html`);
  await restartDemoWidget(page, { theme });
}

const THEMES: [string, Record<string, unknown>][] = [
  ['default', {}],
  ['yellow', { accent: '#f5c400' }],
];

describe('focus rings a keyboard user can see (Chromium)', () => {
  for (const [name, theme] of THEMES) {
    it(`${name} accent: launcher, input, ×, Yes/No, Approve/Decline each show a ring of at least 3:1 against what is behind it`, async () => {
      const page = await demo.browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
      await withScreenshotOnFailure(page, `widget-focus-${name}`, async () => {
        await widget(page, theme);
        const seen: { testid: string; contrast: number }[] = [];
        // The launcher: reached with Tab from the page.
        await page.locator('[data-testid=launcher]').waitFor();
        for (let i = 0; i < 20 && (await ring(page)).testid !== 'launcher'; i++) await page.keyboard.press('Tab');
        seen.push(await ring(page));
        await page.keyboard.press('Enter');
        await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
        seen.push(await ring(page)); // the input, focused on opening

        // A proactive message: its "Update" tag is text in the accent colour (axe checks its contrast at the end).
        const visitor = (await page.context().cookies()).find((c) => c.name === 'parley_demo_visitor')!.value;
        expect(await api('/proactive/opt-in', { customerExternalId: `demo-${visitor}`, optIn: true })).toBe(200);
        expect(await api('/proactive', { customerExternalId: `demo-${visitor}`, channel: 'web', content: 'Your order 1001 ships today.' })).toBeLessThan(300);
        await page.locator('.tag').waitFor({ timeout: 15_000 });

        // Each answer's controls, reached backwards from the input: No, Yes, then × on the header; Decline, Approve.
        seen.push(...(await ringsBackFromInput(page, 'What is the status of order 1001?', 'resolution-yes', 3, `widget-focus-${name}-chip`)));
        seen.push(...(await ringsBackFromInput(page, 'Cancel order 1001', 'confirm', 2, `widget-focus-${name}-card`)));

        expect(seen.map((s) => s.testid)).toEqual(['launcher', 'input', 'resolution-no', 'resolution-yes', 'close', 'decline', 'approve']);
        for (const s of seen) expect(s, s.testid).toMatchObject({ contrast: expect.any(Number) });
        expect(seen.filter((s) => s.contrast < 3)).toEqual([]);
        expect(await axeViolations(page, '#parley-widget')).toEqual([]);
      });
      await page.close();
    }, 90_000);
  }
});
