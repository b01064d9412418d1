// The widget's languages loaded on demand, in real Chromium, embedded on another origin (the language file is fetched
// cross-origin from Parley): a Spanish page never shows an English word (every text and label the widget adds to its
// shadow root is recorded from before its script runs), a Hebrew page gets Hebrew words laid out right to left, a
// language file that fails gives English and one console warning at once, and one that never answers gives English
// after the deadline. Screenshots of es and he at 360x640: /tmp/locales/shots/ when LOCALE_SHOTS says so (else
// test-artifacts/).
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { LOCALE_TABLES } from '../../widget/src/locale-tables.ts';
import { LOCALE_DEADLINE_MS } from '../../widget/src/locales.ts';

const SHOTS = process.env.LOCALE_SHOTS ?? ARTIFACTS;
let browser: Browser;
let parley: TestParley;
let site: Server;
let siteUrl = '';
const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };

/** The integrator's page: a magic-link session in the script tag, `data-locale` from the page's `?locale=`. */
let customers = 0;
async function integratorPage(locale: string): Promise<string> {
  // A customer per page: the magic link is rate limited per address.
  customers += 1;
  const { url } = await (
    await fetch(`${parley.url()}/auth/magic-link`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ email: `lang${customers}@example.com`, externalId: `lang-user-${customers}` }),
    })
  ).json();
  const session = await (await fetch(url)).json();
  const attr = (s: string) => s.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title></head><body><h1>Shop</h1>
<script src="${attr(parley.url())}/widget.js" data-server-url="${attr(parley.url())}" data-customer-id="${attr(session.customerId)}" data-auth-token="${attr(session.sessionToken)}" data-locale="${attr(locale)}"></script>
</body></html>`;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser();
  site = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname !== '/') return void res.writeHead(404).end();
    void integratorPage(u.searchParams.get('locale') ?? 'en').then(
      (html) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html),
      (err: Error) => res.writeHead(500).end(String(err)),
    );
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  parley = await startParley({ config: { identity: { allow_anonymous: false }, channels: { web: { allowed_origins: [siteUrl] } } } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await parley?.close();
  await new Promise((r) => site?.close(r));
});

/**
 * Installed before any script of the page: every shadow root the page attaches is observed, and every text, aria-label,
 * placeholder and title added to it, set on it, or taken from it (old values too) is recorded in `__texts`, with the
 * time the widget's first content appeared (`__shownAt`, ms since navigation).
 */
function recordShadowTexts() {
  const w = window as unknown as { __texts: string[]; __shownAt?: number };
  w.__texts = [];
  const record = (t: string | null | undefined) => t && t.trim() && w.__texts.push(t.trim());
  const ATTRS = ['aria-label', 'placeholder', 'title'];
  const walk = (n: Node) => {
    if (n.nodeType === Node.TEXT_NODE) record((n as Text).data);
    if (n.nodeType !== Node.ELEMENT_NODE || n.nodeName === 'STYLE') return;
    for (const a of ATTRS) record((n as Element).getAttribute(a));
    n.childNodes.forEach(walk);
  };
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (this: Element, init: ShadowRootInit) {
    const root = attach.call(this, init);
    new MutationObserver((mutations) => {
      w.__shownAt ??= performance.now();
      for (const m of mutations) {
        m.addedNodes.forEach(walk);
        m.removedNodes.forEach(walk);
        record(m.oldValue);
        if (m.type === 'attributes') record((m.target as Element).getAttribute(m.attributeName!));
        if (m.type === 'characterData') record((m.target as Text).data);
      }
    }).observe(root, { childList: true, subtree: true, characterData: true, characterDataOldValue: true, attributeFilter: ATTRS, attributeOldValue: true });
    return root;
  };
}

const texts = (page: Page) => page.evaluate(() => (window as unknown as { __texts: string[] }).__texts);

/** The English strings a page in `lang` must never show (those the two tables word differently, without placeholders). */
const englishOnly = (lang: string) =>
  Object.entries(LOCALE_TABLES.en)
    .filter(([k, v]) => v !== LOCALE_TABLES[lang][k as keyof typeof LOCALE_TABLES.en] && !v.includes('{'))
    .map(([, v]) => v);

async function phone(): Promise<{ context: BrowserContext; page: Page; warnings: string[] }> {
  const context = await browser.newContext({ viewport: { width: 360, height: 640 }, isMobile: true, hasTouch: true, locale: 'en-US' });
  const page = await context.newPage();
  await page.addInitScript(recordShadowTexts);
  const warnings: string[] = [];
  page.on('console', (m) => m.type() === 'warning' && warnings.push(m.text()));
  return { context, page, warnings };
}

const launcherLabel = (page: Page) => page.locator('[data-testid=launcher]').getAttribute('aria-label', { timeout: 20_000 });
const status = (page: Page) => page.locator('[data-testid=status]').getAttribute('data-state');

/** Opens the panel, waits until connected, and returns every text recorded so far. */
async function openConnected(page: Page) {
  await page.locator('[data-testid=launcher]').click({ timeout: 20_000 });
  await expect.poll(() => status(page), { timeout: 20_000 }).toBe('Connected');
  await page.locator('[data-testid=panel]').evaluate((e) => Promise.all(e.getAnimations().map((a) => a.finished)));
  return texts(page);
}

/** ms from the widget script's arrival to its first content. */
const shownAfterScript = (page: Page) =>
  page.evaluate(() => {
    const script = performance.getEntriesByType('resource').find((e) => e.name.includes('/widget.js')) as PerformanceResourceTiming;
    return (window as unknown as { __shownAt: number }).__shownAt - script.responseEnd;
  });

describe('widget languages loaded on demand (Chromium, another origin)', () => {
  it("locale 'es': Spanish from the first render on, never an English word; the table came cross-origin, cached for a year", async () => {
    const { context, page, warnings } = await phone();
    await withScreenshotOnFailure(page, 'widget-locale-load-es', async () => {
      const localeResponse = page.waitForResponse((r) => r.url().includes('/widget-locale-es.json'), { timeout: 20_000 });
      await page.goto(`${siteUrl}/?locale=es`);
      const r = await localeResponse;
      expect(r.status()).toBe(200);
      expect(new URL(r.url()).searchParams.get('v')).toMatch(/^[0-9a-f]{12}$/);
      expect(r.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(await launcherLabel(page)).toBe('Abrir chat');
      const seen = await openConnected(page);
      expect(seen).toEqual(expect.arrayContaining(['Abrir chat', 'Cerrar chat', 'Soporte', 'Conectando', 'En línea', 'Escribe tu mensaje…']));
      const english = englishOnly('es');
      expect(english).toEqual(expect.arrayContaining(['Open chat', 'Connecting', 'Online', 'Type your message…']));
      expect(seen.filter((t) => english.includes(t))).toEqual([]);
      expect(await page.locator('.pw').getAttribute('lang')).toBe('es');
      expect(warnings).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'widget-locale-es-360.png') });
    });
    await context.close();
  }, 90_000);

  it("locale 'he': Hebrew words, right to left (mirrored: the launcher and Send on the left), no English word", async () => {
    const { context, page, warnings } = await phone();
    await withScreenshotOnFailure(page, 'widget-locale-load-he', async () => {
      await page.goto(`${siteUrl}/?locale=he-IL`);
      expect(await launcherLabel(page)).toBe('פתיחת הצ׳אט');
      expect(await page.locator('.pw').getAttribute('dir')).toBe('rtl');
      expect(await page.locator('.pw').getAttribute('lang')).toBe('he');
      expect((await page.locator('[data-testid=launcher]').boundingBox())!.x).toBeLessThan(40);
      const seen = await openConnected(page);
      expect(await page.locator('[data-testid=title]').textContent()).toBe('תמיכה');
      expect(await page.locator('[data-testid=status]').textContent()).toBe('מחובר');
      expect(await page.locator('[data-testid=input]').getAttribute('placeholder')).toBe('כתבו הודעה…');
      const [input, send] = await Promise.all(['[data-testid=input]', '[data-testid=send]'].map(async (s) => (await page.locator(s).boundingBox())!));
      expect(send.x + send.width).toBeLessThanOrEqual(input.x);
      expect(seen.filter((t) => englishOnly('he').includes(t))).toEqual([]);
      expect(warnings).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'widget-locale-he-360.png') });
    });
    await context.close();
  }, 90_000);

  it('a language file that fails (404): English at once, left to right, and one console warning', async () => {
    const { context, page, warnings } = await phone();
    await withScreenshotOnFailure(page, 'widget-locale-load-404', async () => {
      await page.route('**/widget-locale-es.json*', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{}' }));
      await page.goto(`${siteUrl}/?locale=es`);
      expect(await launcherLabel(page)).toBe('Open chat');
      expect(await page.locator('.pw').getAttribute('lang')).toBe('en');
      expect(await page.locator('.pw').getAttribute('dir')).toBe('ltr');
      // Not held to the deadline: a failure shows English as soon as it is known.
      expect(await shownAfterScript(page)).toBeLessThan(LOCALE_DEADLINE_MS);
      const seen = await openConnected(page);
      expect(seen).toContain('Online');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/es strings could not be loaded \(HTTP 404/);
    });
    await context.close();
  }, 90_000);

  it('a language file that never answers: English once the deadline has passed, and one console warning', async () => {
    const { context, page, warnings } = await phone();
    await withScreenshotOnFailure(page, 'widget-locale-load-hang', async () => {
      let asked = 0;
      await page.route('**/widget-locale-de.json*', () => {
        asked += 1; // never answered
      });
      await page.goto(`${siteUrl}/?locale=de`);
      expect(await launcherLabel(page)).toBe('Open chat');
      expect(asked).toBe(1);
      const waited = await shownAfterScript(page);
      expect(waited).toBeGreaterThanOrEqual(LOCALE_DEADLINE_MS - 50);
      await expect.poll(() => warnings.length, { timeout: 10_000 }).toBe(1);
      expect(warnings[0]).toMatch(new RegExp(`de strings did not load within ${LOCALE_DEADLINE_MS} ms`));
      expect(await texts(page)).not.toContain('Chat öffnen');
    });
    await context.close();
  }, 90_000);
});
