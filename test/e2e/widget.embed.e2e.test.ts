// An integrator's page on another origin embeds the widget with one script tag
// and a session token its backend got through the magic link; proactive
// messages arrive with the panel open (marked as an update) and closed (an
// unread badge on the launcher).
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { demoBackendReady } from '../support/demo-backend.ts';

let browser: Browser;
let parley: TestParley;
let site: Server;
let siteUrl = '';
const EXTERNAL_ID = 'shop-user-7';
const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };

/** The integrator's backend: magic link → verify → a page with the session token in the script tag. */
async function integratorPage(): Promise<string> {
  const { url } = await (
    await fetch(`${parley.url()}/auth/magic-link`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ email: 'shopper@example.com', externalId: EXTERNAL_ID }),
    })
  ).json();
  const session = await (await fetch(url)).json();
  const attr = (s: string) => s.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><h1>Shop</h1>
<script src="${attr(parley.url())}/widget.js" data-server-url="${attr(parley.url())}" data-customer-id="${attr(session.customerId)}" data-auth-token="${attr(session.sessionToken)}"></script>
</body></html>`;
}

beforeAll(async () => {
  browser = await launchBrowser();
  site = createServer((req, res) => {
    void integratorPage().then((html) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  parley = await startParley({
    config: {
      demo: { backend: true },
      identity: { allow_anonymous: false },
      channels: { web: { allowed_origins: [siteUrl] } },
      proactive: { enabled: true, daily_cap: 10 },
    },
  });
  await demoBackendReady(parley, 'getOrderStatus');
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await parley?.close();
  await new Promise((r) => site?.close(r));
});

const proactive = (content: string) =>
  fetch(`${parley.url()}/proactive`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ customerExternalId: EXTERNAL_ID, channel: 'web', content, dedupKey: content }),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

async function openConnected(page: Page) {
  await page.goto(siteUrl);
  await page.locator('[data-testid=launcher]').click();
  await expect.poll(() => page.locator('[data-testid=status]').textContent(), { timeout: 10_000 }).toBe('Online');
}

describe('the widget embedded on another origin', () => {
  it('one script tag with a magic-link session token: Connected, and a question is answered', async () => {
    const page = await browser.newPage();
    await withScreenshotOnFailure(page, 'widget-embed', async () => {
      await openConnected(page);
      expect(new URL(page.url()).origin).not.toBe(new URL(parley.url()).origin);
      const input = page.locator('[data-testid=input]');
      await input.fill('What is the status of order 1002?');
      await input.press('Enter');
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(1);
      expect(await assistant.first().textContent()).toMatch(/1002.*shipped|shipped.*1002/s);
    });
    await page.close();
  });

  it('proactive messages: marked as an update when open; an unread badge when closed, cleared on open', async () => {
    const page = await browser.newPage();
    await withScreenshotOnFailure(page, 'widget-proactive', async () => {
      await openConnected(page);
      const optIn = await fetch(`${parley.url()}/proactive/opt-in`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ customerExternalId: EXTERNAL_ID, optIn: true }),
      });
      expect(optIn.status).toBe(200);

      expect((await proactive('Your order 1002 is out for delivery')).status).toBe(200);
      const update = page.locator('[data-testid=message][data-role=assistant]', { hasText: 'out for delivery' });
      await update.waitFor({ timeout: 10_000 });
      expect(await update.locator('.tag').textContent()).toBe('Update');
      expect(await update.locator('.msg').textContent()).toBe('Update: Your order 1002 is out for delivery');
      expect(await update.locator('.sr').first().textContent()).toBe('Support: ');
      const launcher = page.locator('[data-testid=launcher]');
      const badge = page.locator('[data-testid=unread]');
      expect(await badge.isHidden()).toBe(true);

      await launcher.click(); // close
      expect(await launcher.getAttribute('aria-label')).toBe('Open chat');
      expect((await proactive('Your order 1002 was delivered')).status).toBe(200);
      await expect.poll(() => badge.isVisible(), { timeout: 10_000 }).toBe(true);
      expect(await badge.textContent()).toBe('1');
      expect(await launcher.getAttribute('aria-label')).toBe('Open chat, 1 new message');
      expect(await page.locator('[data-testid=announcer]').textContent()).toBe('1 new message from Support');

      await launcher.click(); // open
      expect(await badge.isHidden()).toBe(true);
      expect(await launcher.getAttribute('aria-label')).toBe('Close chat');
      const delivered = page.locator('[data-testid=message][data-role=assistant]', { hasText: 'was delivered' });
      expect(await delivered.isVisible()).toBe(true);
    });
    await page.close();
  });
});
