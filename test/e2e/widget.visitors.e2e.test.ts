// Issue 32 in Chromium: an integrator's site on another origin lets a visitor chat before signing in (one script tag,
// no token), the visitor reloads and finds the conversation, then signs in (the site renders an identity token it
// signed itself) and finds the visitor's messages in the customer's conversation.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { signIdentity } from '../../sdk/src/index.ts';
import { launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, type TestParley } from '../support/parley.ts';

const IDENTITY_SECRET = 'identity-secret-0123456789abcdef';
let browser: Browser;
let parley: TestParley;
let site: Server;
let siteUrl = '';

const attr = (s: string) => s.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The integrator's pages: `/` for anyone (a visitor), `/account` for a signed-in customer (an identity token). */
function page(path: string): string {
  const signedIn = path.startsWith('/account');
  const auth = signedIn
    ? `data-auth-token="${attr(signIdentity({ externalId: 'shop-user-32', email: 'buyer@example.com' }, { secret: IDENTITY_SECRET, expiresIn: 600 }))}"`
    : 'data-visitors="true"';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><h1>${signedIn ? 'Account' : 'Shop'}</h1>
<script src="${attr(parley.url())}/widget.js" data-server-url="${attr(parley.url())}" ${auth}></script>
</body></html>`;
}

beforeAll(async () => {
  browser = await launchBrowser();
  site = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(req.url ?? '/')));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  parley = await startParley({
    config: {
      demo: { backend: true },
      identity: { allow_anonymous: false, visitors: true, jwt_secret: IDENTITY_SECRET },
      channels: { web: { allowed_origins: [siteUrl] } },
    },
  });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await parley?.close();
  await new Promise((r) => site?.close(r));
});

async function openConnected(p: Page, url: string) {
  await p.goto(url);
  await p.locator('[data-testid=launcher]').click();
  await expect.poll(() => p.locator('[data-testid=status]').textContent(), { timeout: 15_000 }).toBe('Online');
}

const userMessages = (p: Page) => p.locator('[data-testid=message][data-role=user]');

describe('a visitor on an integrator site', () => {
  it('chats, reloads into the same conversation, signs in and finds the messages in the account', async () => {
    const context = await browser.newContext();
    const p = await context.newPage();
    await withScreenshotOnFailure(p, 'widget-visitor', async () => {
      await openConnected(p, siteUrl);
      const input = p.locator('[data-testid=input]');
      await input.fill('Do you ship to Spain?');
      await input.press('Enter');
      await expect.poll(() => p.locator('[data-testid=message][data-role=assistant]').count(), { timeout: 15_000 }).toBe(1);
      const key = `parley.visitor:${parley.url()}`;
      const kept = await p.evaluate((k) => localStorage.getItem(k), key);
      expect(kept).toMatch(/^vt1\./);

      await p.reload();
      await openConnected(p, siteUrl);
      await expect.poll(() => userMessages(p).allTextContents(), { timeout: 15_000 }).toEqual([expect.stringContaining('Do you ship to Spain?')]);

      await openConnected(p, `${siteUrl}/account`);
      await expect.poll(() => userMessages(p).allTextContents(), { timeout: 15_000 }).toEqual([expect.stringContaining('Do you ship to Spain?')]);
      expect(await p.evaluate((k) => localStorage.getItem(k), key)).toBeNull();
      const customer = await parley.services.store.customers.findBy('ext', 'shop-user-32');
      const stored = await parley.services.store.history.recent(`conv_web_${customer!.customerId}`, 10, ['user']);
      expect(stored.map((r) => r.text)).toEqual(['Do you ship to Spain?']);
    });
    await context.close();
  });
});
