// Sessions that renew themselves, in Chromium: an integrator's page on a second origin embeds the widget with one
// script tag naming `data-auth-url` (no token in the page). The widget fetches a session token from that URL (the
// site's own backend: the shopper's cookie → magic link + verify → the token) and connects; later the token expires
// (Parley's test clock moves past `identity.session_ttl_minutes`), the network drops, Parley refuses the old token on
// the reconnect (unauthorized, 4001), the widget fetches a fresh one and keeps chatting, in the same page (a window
// marker survives, the page was served once). A site whose auth URL fails gets the session-ended notice, once.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startTcpCutProxy, type TcpCutProxy } from '../support/tcp-cut-proxy.ts';
import { demoBackendReady } from '../support/demo-backend.ts';

let browser: Browser;
let parley: TestParley;
let proxy: TcpCutProxy;
let site: Server;
let siteUrl = '';
let customerId = '';
const EXTERNAL_ID = 'shop-user-renew';
const SESSION_TTL_MINUTES = 60;
const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };

/** The site's backend state: pages served, token requests per shopper cookie, and whether the auth URL works. */
const shop = { pages: 0, tokenCalls: new Map<string, number>(), failing: false };
const cookieOf = (req: IncomingMessage) => /(?:^|;\s*)shop_session=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1];

/** What the integrator's backend does for a signed-in shopper: magic link + verify, server to server. */
async function mintSession(): Promise<{ customerId: string; sessionToken: string }> {
  const link = await fetch(`${parley.url()}/auth/magic-link`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ email: 'renew@example.com', externalId: EXTERNAL_ID }),
  });
  if (link.status !== 200) throw new Error(`magic-link answered ${link.status}: ${await link.text()}`);
  const verified = await fetch((await link.json()).url);
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}`);
  return verified.json();
}

const attr = (s: string) => s.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (sid: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><h1>Shop</h1>
<script>window.shopPageId = ${JSON.stringify(sid)};</script>
<script src="${attr(parley.url())}/widget.js" data-server-url="${attr(proxy.url)}" data-customer-id="${attr(customerId)}" data-auth-url="/parley-token"></script>
</body></html>`;

/** The same page with `Parley.init({ authUrl })` from its own script, and no customer id (the auth URL names it). */
const initPage = (sid: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><h1>Shop</h1>
<script>window.shopPageId = ${JSON.stringify(sid)};</script>
<script src="${attr(parley.url())}/widget.js"></script>
<script>window.Parley.init({ serverUrl: ${JSON.stringify(proxy.url)}, authUrl: '/parley-token?with=customer' });</script>
</body></html>`;

/**
 * The site: `/` (and `/init`) signs the shopper in (a cookie); `/parley-token` answers the token: text the first
 * time, then JSON {token}; with `?with=customer` always JSON {token, customerId}.
 */
function siteHandler(req: IncomingMessage, res: import('node:http').ServerResponse) {
  if (req.url === '/' || req.url === '/init') {
    shop.pages++;
    const sid = `s-${shop.pages}-${Date.now()}`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'set-cookie': `shop_session=${sid}; HttpOnly; Path=/; SameSite=Lax` });
    return res.end(req.url === '/' ? page(sid) : initPage(sid));
  }
  if (req.url?.startsWith('/parley-token')) {
    const withCustomer = req.url === '/parley-token?with=customer';
    const sid = cookieOf(req);
    if (!sid) return res.writeHead(401, { 'content-type': 'text/plain' }).end('not signed in');
    const n = (shop.tokenCalls.get(sid) ?? 0) + 1;
    shop.tokenCalls.set(sid, n);
    if (shop.failing) return res.writeHead(503, { 'content-type': 'text/plain' }).end('backend down');
    void mintSession().then(
      (s) => {
        if (withCustomer) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: s.sessionToken, customerId: s.customerId }));
        else if (n === 1) res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end(s.sessionToken);
        else res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify({ token: s.sessionToken }));
      },
      (err: Error) => res.writeHead(500).end(err.message),
    );
    return;
  }
  res.writeHead(404).end();
}

beforeAll(async () => {
  browser = await launchBrowser();
  site = createServer(siteHandler);
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  parley = await startParley({
    config: {
      demo: { backend: true },
      identity: { allow_anonymous: false, session_ttl_minutes: SESSION_TTL_MINUTES },
      channels: { web: { allowed_origins: [siteUrl] } },
    },
  });
  const { port } = new URL(parley.url());
  proxy = await startTcpCutProxy({ host: '127.0.0.1', port: Number(port) });
  customerId = (await mintSession()).customerId; // the site knows its shopper's Parley customer id
  await demoBackendReady(parley, 'getOrderStatus');
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await parley?.close();
  if (site) await new Promise((r) => site.close(r));
});

const moveParleyClock = async (offsetMs: number) => {
  const r = await fetch(`${parley.url()}/__test__/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ offsetMs }),
  });
  expect(r.status).toBe(200);
};
const status = (p: Page) => p.locator('[data-testid=status]');
const calls = (p: Page) => p.evaluate(() => (window as unknown as { shopPageId: string }).shopPageId).then((sid) => shop.tokenCalls.get(sid) ?? 0);

async function ask(p: Page, question: string, answers: number, pattern: RegExp) {
  const input = p.locator('[data-testid=input]');
  await input.fill(question);
  await input.press('Enter');
  const assistant = p.locator('[data-testid=message][data-role=assistant]');
  await expect.poll(() => assistant.count(), { timeout: 15_000 }).toBe(answers);
  expect(await assistant.nth(answers - 1).textContent()).toMatch(pattern);
}

describe('a script-tag widget with data-auth-url', () => {
  it('fetches its token from the site, and keeps chatting across an expired token without a reload', async () => {
    const p = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    const consoleLines: string[] = [];
    p.on('console', (m) => consoleLines.push(m.text()));
    await withScreenshotOnFailure(p, 'widget-auth-url', async () => {
      await p.goto(siteUrl);
      await p.evaluate(() => ((window as unknown as { marker: string }).marker = 'still the same page'));
      await p.locator('[data-testid=launcher]').click();
      await expect.poll(() => status(p).textContent(), { timeout: 15_000 }).toBe('Online');
      expect(await calls(p)).toBe(1); // the page had no token: the widget fetched one (text) from the auth URL
      await ask(p, 'What is the status of order 1002?', 1, /1002.*shipped|shipped.*1002/s);

      // the token expires; then the network drops: the reconnect's init is refused, a fresh token is fetched (JSON)
      await moveParleyClock((SESSION_TTL_MINUTES + 1) * 60_000);
      expect(proxy.cutAll()).toBeGreaterThan(0);
      await expect.poll(() => calls(p), { timeout: 20_000 }).toBe(2);
      await expect.poll(() => status(p).textContent(), { timeout: 20_000 }).toBe('Online');
      expect(consoleLines.join('\n')).toMatch(/\[parley\] unauthorized: Session token refused \(expired\)/);

      await ask(p, 'What is the status of order 1003?', 2, /1003.*delivered|delivered.*1003/s);
      expect(await p.locator('[data-testid=message][data-role=user]').count()).toBe(2); // the history before the renewal stays
      expect(await p.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('still the same page');
      expect(shop.pages).toBe(1); // never reloaded
      expect(await p.locator('[data-testid=notice]').isHidden()).toBe(true);
      mkdirSync(ARTIFACTS, { recursive: true });
      await p.screenshot({ path: join(ARTIFACTS, 'widget-auth-url-renewed.png') });
    });
    await p.close();
  });

  it('an auth URL that fails on the refusal: the session-ended notice, after one fetch, and no loop', async () => {
    const p = await browser.newPage();
    await withScreenshotOnFailure(p, 'widget-auth-url-failing', async () => {
      await p.goto(siteUrl);
      await p.locator('[data-testid=launcher]').click();
      await expect.poll(() => status(p).textContent(), { timeout: 15_000 }).toBe('Online');
      expect(await calls(p)).toBe(1);

      shop.failing = true;
      await moveParleyClock(3 * (SESSION_TTL_MINUTES + 1) * 60_000);
      proxy.cutAll();
      await expect.poll(() => status(p).getAttribute('data-state'), { timeout: 20_000 }).toBe('Disconnected');
      expect(await p.locator('[data-testid=notice]').textContent()).toBe('Your session has ended. Please reload the page to keep chatting.');
      expect(await p.locator('[data-testid=input]').isDisabled()).toBe(true);
      expect(await calls(p)).toBe(2);
      // the widget gave up: no more fetches and no more sockets (a short look after the condition was reached)
      const cutBefore = proxy.cutAll();
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await calls(p)).toBe(2);
      expect(proxy.cutAll()).toBe(0);
      expect(cutBefore).toBe(0);
    });
    shop.failing = false;
    await p.close();
  });

  it('Parley.init({ authUrl }) without a customer id: the JSON answer {token, customerId} names the customer', async () => {
    shop.failing = false; // whatever the test before left
    const p = await browser.newPage();
    await withScreenshotOnFailure(p, 'widget-auth-url-init', async () => {
      await p.goto(`${siteUrl}/init`);
      await p.locator('[data-testid=launcher]').click();
      await expect.poll(() => status(p).textContent(), { timeout: 15_000 }).toBe('Online');
      expect(await calls(p)).toBe(1);
      const before = await p.locator('[data-testid=message][data-role=assistant]').count();
      await ask(p, 'What is the status of order 1001?', before + 1, /1001/);
    });
    await p.close();
  });
});
