// The widget right to left, in real Chromium against the demo: an Arabic widget is `dir="rtl"` and mirrored (the
// launcher and the panel at the bottom left, × at the header's left, Send left of the input, the customer's bubbles on
// the left, the cards' accent edge on the right), each message's text runs its own way (`dir="auto"`: an English line
// in the Arabic panel stays left to right, an Arabic line in the English panel right to left), axe-core finds
// nothing; the English default is laid out as before, even on a right-to-left page. The header's status dot stands
// out (3:1) from what surrounds it, for any accent, light and dark. Screenshots: /tmp/rtl/shots/ (and
// test-artifacts/widget-rtl-*.png), 1280x800 and 360x640, RTL and LTR.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { restartDemoWidget } from '../support/demo-widget.ts';
import { axeViolations } from '../support/axe.ts';

// CSAT on: the rating card follows a "yes" to "Did that answer your question?".
const demo = useDemoParley({ outcomes: { csat: true } }, 60_000);
const SHOTS = process.env.RTL_SHOTS ?? ARTIFACTS;
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

type Box = { x: number; y: number; width: number; height: number };
const box = async (page: Page, selector: string): Promise<Box> => (await page.locator(selector).last().boundingBox())!;
const right = (b: Box) => b.x + b.width;

async function widget(page: Page, options: Record<string, unknown>) {
  await page.goto(`${demo.parley.url()}/demo.html`);
  await restartDemoWidget(page, options);
  await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
}

/** Sends `text` and waits for the answer to it (the demo's offline model answers in English). */
async function ask(page: Page, text: string) {
  const replies = await page.locator('[data-testid=message][data-role=assistant]').count();
  await page.locator('[data-testid=input]').fill(text);
  await page.locator('[data-testid=input]').press('Enter');
  await expect.poll(() => page.locator('[data-testid=message][data-role=assistant]').count(), { timeout: 30_000 }).toBeGreaterThan(replies);
}

/** The direction a message's text resolved to (its `dir="auto"`), the last one of `role`. */
const textDirection = (page: Page, role: string) =>
  page
    .locator(`[data-testid=message][data-role=${role}] .text`)
    .last()
    .evaluate((e) => [e.getAttribute('dir'), getComputedStyle(e).direction]);

/** Where the desktop layout's parts are: every box a mirrored layout moves. */
async function layout(page: Page) {
  // The panel pops in (scaled a little): measured once its animation is over.
  await page.locator('[data-testid=panel]').evaluate((e) => Promise.all(e.getAnimations().map((a) => a.finished)));
  return {
    dir: await page.locator('.pw').getAttribute('dir'),
    panel: await box(page, '[data-testid=panel]'),
    launcher: await box(page, '[data-testid=launcher]'),
    input: await box(page, '[data-testid=input]'),
    send: await box(page, '[data-testid=send]'),
    close: await box(page, '.close'),
    title: await box(page, '[data-testid=title]'),
  };
}

describe('the widget right to left (Chromium)', () => {
  it('ar at 1280x800: dir=rtl, everything on the mirrored side of the English layout; messages keep their own direction; axe is clean', async () => {
    const context = await demo.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-rtl-ar', async () => {
      await widget(page, { open: true });
      const en = await layout(page);
      await restartDemoWidget(page, { open: true, locale: 'ar' });
      await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
      const ar = await layout(page);
      expect([en.dir, ar.dir]).toEqual(['ltr', 'rtl']);
      expect(await page.locator('.pw').getAttribute('lang')).toBe('ar');
      // The panel and the launcher: the bottom left corner, where the English ones are at the bottom right.
      for (const part of ['panel', 'launcher', 'input', 'send'] as const) {
        expect(Math.abs(ar[part].x - (1280 - right(en[part]))), part).toBeLessThanOrEqual(1);
        expect(ar[part].width, part).toBeCloseTo(en[part].width, 0);
      }
      expect(right(ar.panel)).toBeLessThan(640);
      // Send left of the input, × left of the title.
      expect(right(ar.send)).toBeLessThanOrEqual(ar.input.x);
      expect(right(ar.close)).toBeLessThanOrEqual(ar.title.x);

      await ask(page, 'What is the status of order 1001? I ordered it last week and it has not arrived yet.');
      await ask(page, 'مرحبا، أين طلبي 1001؟');
      const log = await box(page, '[data-testid=messages]');
      // The customer's bubble on the left (the end side), the assistant's on the right (the start side).
      const mine = await box(page, '[data-testid=message][data-role=user] .msg');
      const reply = await box(page, '[data-testid=message][data-role=assistant] .msg');
      expect(mine.x - log.x).toBeLessThan(30);
      expect(right(log) - right(reply)).toBeLessThan(30);
      expect(right(mine)).toBeLessThan(right(log) - 60);
      // dir="auto": the Arabic line runs right to left, the English reply keeps left to right inside the Arabic panel.
      expect(await textDirection(page, 'user')).toEqual(['auto', 'rtl']);
      expect(await textDirection(page, 'assistant')).toEqual(['auto', 'ltr']);
      // A time's tooltip starts at its right edge and opens to the left (the customer's: the other way).
      const tip = (role: string) =>
        page
          .locator(`[data-testid=message][data-role=${role}] [data-testid=time]`)
          .last()
          .evaluate((e) => [getComputedStyle(e, '::after').left, getComputedStyle(e, '::after').right]);
      expect((await tip('assistant'))[1]).toBe('0px');
      expect((await tip('user'))[0]).toBe('0px');
      // The English question's lines (it wraps) start on the left of its bubble, as English lines do, ragged on the right.
      const english = await page
        .locator('[data-testid=message][data-role=user] .text')
        .first()
        .evaluate((e) => {
          const range = document.createRange();
          range.selectNodeContents(e);
          const lines = [...range.getClientRects()];
          const b = e.getBoundingClientRect();
          return { direction: getComputedStyle(e).direction, lines: lines.length, lastLineGap: lines[lines.length - 1].left - b.left };
        });
      expect(english.direction).toBe('ltr');
      expect(english.lines).toBeGreaterThan(1);
      expect(english.lastLineGap).toBeLessThan(2);
      // The input: dir="auto", each paragraph its own way (plaintext), and empty (its placeholder, its caret) right to left.
      const field = () =>
        page.locator('[data-testid=input]').evaluate((e) => [e.getAttribute('dir'), getComputedStyle(e).unicodeBidi, getComputedStyle(e).direction]);
      expect(await field()).toEqual(['auto', 'plaintext', 'rtl']);

      // A confirmation card: its accent edge on the right (the start side), Approve (first) right of Decline.
      await page.locator('[data-testid=input]').fill('cancel order 1001');
      await page.locator('[data-testid=input]').press('Enter');
      const card = page.locator('[data-testid=confirm]').last();
      await card.waitFor({ timeout: 30_000 });
      expect(await card.evaluate((e) => [getComputedStyle(e).borderRightWidth, getComputedStyle(e).borderLeftWidth])).toEqual(['4px', '1px']);
      expect((await card.locator('[data-testid=approve]').boundingBox())!.x).toBeGreaterThan((await card.locator('[data-testid=decline]').boundingBox())!.x);

      expect(await axeViolations(page, '#parley-widget')).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'widget-rtl-ar-1280.png') });
    });
    await context.close();
  }, 120_000);

  it('ar at 360x640: the launcher at the bottom left; open, the header, the input bar and the bubbles mirrored; axe is clean', async () => {
    const context = await demo.browser.newContext({ viewport: { width: 360, height: 640 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-rtl-ar-360', async () => {
      await widget(page, { locale: 'ar' });
      const launcher = await box(page, '[data-testid=launcher]');
      expect(launcher.x).toBeLessThan(40);
      // A reply while the panel is closed: the unread badge on the launcher's top left corner (the end side).
      await page.evaluate(() => (window as unknown as { Parley: { instance: { send(t: string): void } } }).Parley.instance.send('مرحبا'));
      const badge = page.locator('[data-testid=unread]');
      await expect.poll(() => badge.isVisible(), { timeout: 30_000 }).toBe(true);
      const b = (await badge.boundingBox())!;
      expect(b.x).toBeLessThan(launcher.x);
      expect(right(b)).toBeLessThan(launcher.x + launcher.width / 2);
      await page.locator('[data-testid=launcher]').click();
      const [input, send, close, title] = await Promise.all(
        ['[data-testid=input]', '[data-testid=send]', '.close', '[data-testid=title]'].map((s) => box(page, s)),
      );
      expect(right(send)).toBeLessThanOrEqual(input.x);
      expect(send.x).toBeLessThan(30);
      expect(right(close)).toBeLessThanOrEqual(title.x);
      // The send arrow points left.
      expect(await page.locator('[data-testid=send] svg').evaluate((e) => getComputedStyle(e).transform)).toBe('matrix(-1, 0, 0, 1, 0, 0)');
      await ask(page, 'مرحبا، أين طلبي 1001؟');
      const log = await box(page, '[data-testid=messages]');
      expect((await box(page, '[data-testid=message][data-role=user] .msg')).x - log.x).toBeLessThan(30);

      // The rating card: its accent edge on the right, 1 to 5 from right to left, and the arrow keys go the same way.
      await page.locator('[data-testid=resolution-yes]').click({ timeout: 30_000 });
      const rating = page.locator('[data-testid=rating]');
      await rating.waitFor({ timeout: 30_000 });
      expect(await rating.evaluate((e) => [getComputedStyle(e).borderRightWidth, getComputedStyle(e).borderLeftWidth])).toEqual(['4px', '1px']);
      const [one, five] = await Promise.all(['1', '5'].map((n) => box(page, `[data-testid=rating] [data-score="${n}"]`)));
      expect(one.x).toBeGreaterThan(five.x);
      await page.locator('[data-testid=rating] [data-score="1"]').focus();
      const chosen = () => page.locator('[data-testid=rating] [aria-checked=true]').getAttribute('data-score');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
      expect(await chosen()).toBe('3');
      await page.keyboard.press('ArrowRight');
      expect(await chosen()).toBe('2');
      expect(await axeViolations(page, '#parley-widget')).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'widget-rtl-ar-360.png') });
    });
    await context.close();
  }, 120_000);

  it('en (the default) is laid out as before, on a right-to-left page too; an Arabic line inside runs right to left', async () => {
    for (const [width, height] of [
      [1280, 800],
      [360, 640],
    ]) {
      const context = await demo.browser.newContext({ viewport: { width, height }, isMobile: width < 480, hasTouch: width < 480 });
      const page = await context.newPage();
      await withScreenshotOnFailure(page, `widget-rtl-en-${width}`, async () => {
        await widget(page, {});
        // The page itself right to left: the widget's English layout does not inherit it.
        await page.evaluate(() => document.documentElement.setAttribute('dir', 'rtl'));
        const launcher = await box(page, '[data-testid=launcher]');
        expect(right(launcher)).toBeGreaterThan(width - 40);
        await page.locator('[data-testid=launcher]').click();
        const l = await layout(page);
        expect(l.dir).toBe('ltr');
        expect(l.send.x).toBeGreaterThanOrEqual(right(l.input));
        expect(right(l.send)).toBeGreaterThan(width - 50);
        expect(l.close.x).toBeGreaterThanOrEqual(right(l.title));
        if (width > 480) expect(l.panel.x).toBeGreaterThan(width / 2);
        await ask(page, 'مرحبا، أين طلبي 1001؟');
        const log = await box(page, '[data-testid=messages]');
        expect(right(log) - right(await box(page, '[data-testid=message][data-role=user] .msg'))).toBeLessThan(30);
        expect((await box(page, '[data-testid=message][data-role=assistant] .msg')).x - log.x).toBeLessThan(30);
        expect(await textDirection(page, 'user')).toEqual(['auto', 'rtl']);
        expect(await textDirection(page, 'assistant')).toEqual(['auto', 'ltr']);
        await page.screenshot({ path: join(SHOTS, `widget-rtl-en-${width}.png`) });
      });
      await context.close();
    }
  }, 180_000);

  it('dir: "rtl" lays out a language the widget does not ship (the page gives its words); dir: "ltr" keeps an Arabic widget left to right', async () => {
    const context = await demo.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // Persian: not shipped (Hebrew is, since the tables load on demand).
    await widget(page, { open: true, locale: 'fa' });
    // No Persian words in the widget: English words, English layout.
    expect(await page.locator('.pw').getAttribute('dir')).toBe('ltr');
    await restartDemoWidget(page, { open: true, locale: 'fa', dir: 'rtl', strings: { title: 'پشتیبانی' } });
    await expect.poll(() => page.locator('.pw').getAttribute('dir')).toBe('rtl');
    expect(right(await box(page, '[data-testid=panel]'))).toBeLessThan(640);
    await restartDemoWidget(page, { open: true, locale: 'ar', dir: 'ltr' });
    await expect.poll(() => page.locator('.pw').getAttribute('dir')).toBe('ltr');
    expect((await box(page, '[data-testid=panel]')).x).toBeGreaterThan(640);
    // The page's position wins over the direction's default side.
    await restartDemoWidget(page, { open: true, locale: 'ar', theme: { position: 'right' } });
    await expect.poll(() => page.locator('.pw').getAttribute('dir')).toBe('rtl');
    expect((await box(page, '[data-testid=panel]')).x).toBeGreaterThan(640);

    // The script tag's data-dir does the same.
    await page.evaluate(async () => {
      const w = window as unknown as { Parley: { instance: { destroy(): void } } };
      w.Parley.instance.destroy();
      const s = (await fetch('/demo/session').then((r) => r.json())) as Record<string, string>;
      const tag = document.createElement('script');
      Object.assign(tag.dataset, { serverUrl: s.serverUrl, customerId: s.customerId, authToken: s.authToken, locale: 'fa', dir: 'rtl', open: 'true' });
      tag.src = '/widget.js';
      document.body.append(tag);
    });
    await expect.poll(() => page.locator('.pw').getAttribute('dir'), { timeout: 15_000 }).toBe('rtl');
    expect(await page.locator('#parley-widget').count()).toBe(1);
    await context.close();
  }, 120_000);
});

/** WCAG contrast of two `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const x = Number(v) / 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe("the header's status dot (Chromium)", () => {
  it('3:1 or more against the pill it sits on (and that pill is what surrounds it), for any accent, light and dark, in every state', async () => {
    const context = await demo.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await widget(page, { open: true });
    for (const accent of ['#2f5bea', '#ffe066', '#111111', '#00aa77', '#ff0000']) {
      for (const colorScheme of ['light', 'dark']) {
        await restartDemoWidget(page, { open: true, theme: { accent, colorScheme } });
        await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
        // Each state's colour, read from the real stylesheet (the states other than Connected set on the dot).
        for (const state of ['Connected', 'Connecting', 'Reconnecting', 'Disconnected']) {
          const c = await page.locator('.dot').evaluate((dot, st) => {
            dot.setAttribute('data-state', st);
            const pill = dot.parentElement!;
            const d = dot.getBoundingClientRect();
            const p = pill.getBoundingClientRect();
            return {
              dot: getComputedStyle(dot).backgroundColor,
              pill: getComputedStyle(pill).backgroundColor,
              inside: d.left >= p.left && d.right <= p.right && d.top >= p.top && d.bottom <= p.bottom,
            };
          }, state);
          expect(c.inside).toBe(true);
          const ratio = contrast(c.dot, c.pill);
          expect(ratio, `${accent} ${colorScheme} ${state} ${c.dot} on ${c.pill}`).toBeGreaterThanOrEqual(3);
        }
      }
    }
    await context.close();
  }, 240_000);
});
