// A link to one conversation in the inbox, in real Chromium: /inbox#conversation=<id> opened before sign-in keeps its
// hash through the sign-in form and opens that conversation after it — one that is not in the list shown (the list does
// not page: at most 200 per view; this one is with the assistant, so not under the default view, Waiting); opening one
// from the list puts its link in the address (replaceState: no history entry per conversation); changing the hash opens
// another; signing out leaves the address; "Copy link" (from the keyboard) copies the full address and says so in the
// announced toast; an unknown or a malformed id shows a notice in the pane; the dashboard's "With a person" and outcome
// rows link the customer to it. axe-core finds nothing.
// Screenshots: test-artifacts/inbox-link-{1280,1024}.png, inbox-link-notice-{1280,1024}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PASSWORD } from '../support/agents.ts';
import { axeViolations } from '../support/axe.ts';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { startChromiumParley } from '../support/chromium-parley.ts';
import { namedAgent } from '../support/inbox.ts';
import { TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const DEADLINE = 30_000;
/** With the assistant: not in the Waiting list the inbox opens on. */
const PLAIN = 'conv_web_cust-plain';
/** Handed over: the one row of Waiting and of the dashboard's "With a person". */
const WAITING = 'conv_web_cust-waiting';

let browser: Browser;
let p: TestParley;
let close = async () => {};
const contexts: BrowserContext[] = [];
const customers: WidgetClient[] = [];

beforeAll(async () => {
  const started = await startChromiumParley({
    telemetry: { store_text: true },
    // Ada signs in once per test, each time in a new browser: more than the default 5 a minute.
    agents: { sign_in_per_account_per_minute: 100 },
  });
  ({ browser, parley: p, close } = started);
  started.llm.fallback({ text: 'Hello! How can I help?' });
  await namedAgent(p, 'Ada');
  for (const who of ['plain', 'waiting']) {
    const w = await startWidgetSession(p.url(), { customerId: `cust-${who}`, email: `${who}@example.com` });
    customers.push(w);
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE);
  }
  const handoff = await fetch(`${p.url()}/conversations/${WAITING}/handoff`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'refund question' }),
  });
  expect(handoff.status).toBe(200);
}, 90_000);

afterAll(async () => {
  for (const w of customers) w.close();
  for (const c of contexts) await c.close().catch(() => undefined);
  await close();
});

/** A new browser (its own cookies, the clipboard allowed) at `path`, signed in as Ada there. */
async function signedInAt(path: string, width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  contexts.push(context);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.url() });
  const page = await context.newPage();
  await page.goto(`${p.url()}${path}`);
  await page.locator('[data-testid=email-input]').fill('ada@example.com');
  // The sign-in form is drawn on the linked address: the hash is still there.
  expect(new URL(page.url()).hash).toBe(new URL(`${p.url()}${path}`).hash);
  await page.locator('[data-testid=password-input]').fill(PASSWORD);
  await page.locator('[data-testid=password-input]').press('Enter');
  await expect.poll(() => page.locator('[data-testid=live-state]').textContent(), { timeout: DEADLINE }).toBe('Live');
  return page;
}

async function shot(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
  expect(await axeViolations(page)).toEqual([]);
}

const title = (page: Page) => page.locator('[data-testid=conversation-title]').textContent();
const notice = (page: Page) => page.locator('[data-testid=link-notice]').textContent();

describe('a link to one conversation (Chromium)', () => {
  for (const width of [1280, 1024]) {
    it(`at ${width} px: a link opened before sign-in opens its conversation after it, one not in the list`, async () => {
      const page = await signedInAt(`/inbox#conversation=${encodeURIComponent(PLAIN)}`, width);
      await withScreenshotOnFailure(page, `inbox-link-${width}`, async () => {
        await expect.poll(() => title(page), { timeout: DEADLINE }).toBe('plain@example.com');
        expect(await page.locator('[data-testid=holder]').textContent()).toBe('Web · With the assistant');
        // The list (Waiting) holds the other one only: this one was fetched by its id.
        await page.locator(`[data-testid=conversation-item][data-id="${WAITING}"]`).waitFor({ timeout: DEADLINE });
        expect(await page.locator(`[data-testid=conversation-item][data-id="${PLAIN}"]`).count()).toBe(0);
        expect(await page.locator('[data-testid=copy-link]').isVisible()).toBe(true);
        await shot(page, `inbox-link-${width}`);

        // An unknown id: a notice in the pane, announced; the page goes on working.
        await page.evaluate(() => (location.hash = 'conversation=conv_web_nobody'));
        await expect.poll(() => notice(page), { timeout: DEADLINE }).toContain('No conversation matches this link');
        expect(await page.locator('[data-testid=toast]').textContent()).toContain('No conversation matches this link');
        expect(await page.locator('[data-testid=conversation-title]').count()).toBe(0);
        await shot(page, `inbox-link-notice-${width}`);
      });
    }, 120_000);
  }

  it('the address follows the open conversation; a changed hash opens another; a malformed one says so', async () => {
    const page = await signedInAt('/inbox', 1280);
    await withScreenshotOnFailure(page, 'inbox-link-address', async () => {
      const entries = await page.evaluate(() => history.length);
      await page.locator(`[data-testid=conversation-item][data-id="${WAITING}"]`).click({ timeout: DEADLINE });
      await expect.poll(() => title(page), { timeout: DEADLINE }).toBe('waiting@example.com');
      expect(page.url()).toBe(`${p.url()}/inbox#conversation=${WAITING}`);
      // Back leaves the inbox as before: opening a conversation adds no history entry.
      expect(await page.evaluate(() => history.length)).toBe(entries);

      await page.evaluate((id) => (location.hash = `conversation=${encodeURIComponent(id)}`), PLAIN);
      await expect.poll(() => title(page), { timeout: DEADLINE }).toBe('plain@example.com');

      await page.evaluate(() => (location.hash = 'conversation='));
      await expect.poll(() => notice(page), { timeout: DEADLINE }).toContain('This link does not name a conversation.');
      await page.evaluate((id) => (location.hash = `conversation=${encodeURIComponent(id)}`), WAITING);
      await expect.poll(() => title(page), { timeout: DEADLINE }).toBe('waiting@example.com');
      // Longer than any id the server takes: the same notice, no request refused.
      await page.evaluate(() => (location.hash = `conversation=${'x'.repeat(300)}`));
      await expect.poll(() => notice(page), { timeout: DEADLINE }).toContain('This link does not name a conversation.');

      // Signing out leaves the conversation's address: the next person to sign in here starts from the list.
      await page.evaluate((id) => (location.hash = `conversation=${encodeURIComponent(id)}`), PLAIN);
      await expect.poll(() => title(page), { timeout: DEADLINE }).toBe('plain@example.com');
      await page.locator('[data-testid=sign-out]').click();
      await page.locator('[data-testid=sign-in-form]').waitFor({ timeout: DEADLINE });
      expect(page.url()).toBe(`${p.url()}/inbox`);
    });
  }, 120_000);

  it('Copy link, from the keyboard, copies the full address and says so', async () => {
    const page = await signedInAt(`/inbox#conversation=${PLAIN}`, 1280);
    await withScreenshotOnFailure(page, 'inbox-link-copy', async () => {
      await expect.poll(() => title(page), { timeout: DEADLINE }).toBe('plain@example.com');
      const copy = page.locator('[data-testid=copy-link]');
      expect(await copy.getAttribute('type')).toBe('button');
      await copy.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('[data-testid=toast]').textContent(), { timeout: DEADLINE }).toBe('Link copied.');
      expect(await page.locator('[data-testid=toast]').getAttribute('role')).toBe('status');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${p.url()}/inbox#conversation=${PLAIN}`);
    });
  }, 120_000);

  it("the dashboard's customer cells link to the conversation in the inbox", async () => {
    const page = await signedInAt('/inbox', 1280);
    await withScreenshotOnFailure(page, 'inbox-link-dashboard', async () => {
      await page.goto(`${p.url()}/telemetry`);
      await page.evaluate((s) => sessionStorage.setItem('parley.secret', s), TEST_SECRET);
      await page.reload();
      const withHuman = page.locator('[data-testid=with-human-row] [data-testid=inbox-link]');
      await withHuman.first().waitFor({ timeout: DEADLINE });
      expect(await withHuman.allTextContents()).toEqual([expect.stringContaining('cust-waiting')]);
      expect(await withHuman.getAttribute('href')).toBe(`/inbox#conversation=${WAITING}`);
      const outcome = page.locator('[data-testid=outcome-row] [data-testid=inbox-link]');
      await expect.poll(() => outcome.count(), { timeout: DEADLINE }).toBe(2);
      expect((await outcome.evaluateAll((as) => as.map((a) => a.getAttribute('href')))).sort()).toEqual(
        [`/inbox#conversation=${PLAIN}`, `/inbox#conversation=${WAITING}`].sort(),
      );
      expect(await axeViolations(page)).toEqual([]);
      await withHuman.click();
      await expect.poll(() => title(page), { timeout: DEADLINE }).toBe('waiting@example.com');
      expect(page.url()).toBe(`${p.url()}/inbox#conversation=${WAITING}`);
    });
  }, 120_000);
});
