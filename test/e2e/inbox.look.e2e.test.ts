// The agent inbox as it looks, in real Chromium: what a visual review at 1,280 × 800 and 768 × 1,024 px found, each kept
// by a measurement. A customer with a long address whose assistant's tool call had a long JSON argument (and failed),
// handed over while nobody was online (the "offline" notice), a teammate with a long name, two customers waiting past
// the SLA, a long saved reply: the conversation's header stays on one line for the address and the Assign list inside
// the column; tool JSON stays in its box; presence dots keep their size; the selected row stands out among late rows
// and its focus ring is inside the list; the offline notice and a search with no match say what they mean; a cut
// saved reply ends with "…"; a conversation a teammate holds offers Claim and notes only, and its customer's address has
// the panel's width; at 768 px the composer's Send button is on the screen and a toast leaves it free. The lost live
// connection is said loudly, presence is shown as unknown (not online) while it is down, and the page is Live again,
// with presence told by the server, after the server restarts. axe-core finds no violations.
// Screenshots: test-artifacts/inbox-look-{1280,1280-held,768,768-claimed,down,down-768,back-768}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createAgent, PASSWORD, post } from '../support/agents.ts';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { startChromiumParley } from '../support/chromium-parley.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { inboxApi, namedAgent } from '../support/inbox.ts';
import { freePort } from '../support/free-port.ts';
import { startParley, TEST_SECRET, tempDir, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { axeViolations } from '../support/axe.ts';
import { demoBackendReady } from '../support/demo-backend.ts';

const DEADLINE = 20_000;
const LONG_ADDRESS = 'maximilian.alexander.von-hohenzollern-sigmaringen@customer-support.very-long-subdomain.example.com';
const LONG_NAME = 'Bartholomew Fitzgerald-Wolfeschlegelsteinhausen-Bergerdorff';
const LONG_ID = `ORD-${'0'.repeat(60)}123456789`;
const LONG_CONV = 'conv_web_long-customer';

let browser: Browser;
let p: TestParley;
let llm: FakeOpenAi;
let close = async () => {};
const contexts: BrowserContext[] = [];

const handOver = (conversationId: string) =>
  fetch(`${p.url()}/conversations/${conversationId}/handoff`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
    body: '{}',
  });

/** A customer who says hello and is handed over `minutesAgo` (the server's test clock set back meanwhile). */
async function waitingCustomer(customerId: string, email: string, minutesAgo: number) {
  const w = await startWidgetSession(p.url(), { customerId, email });
  w.send({ type: 'message', id: 'm1', text: `hello from ${customerId}` });
  await w.next((f) => f.type === 'message', DEADLINE);
  await post(p, '/__test__/clock', { offsetMs: -minutesAgo * 60_000 });
  expect((await handOver(`conv_web_${customerId}`)).status).toBe(200);
  await post(p, '/__test__/clock', { offsetMs: 0 });
  w.close();
}

/** Waits until the conversation holds the "no one has answered yet" record (the customer was told). */
async function offlineNoticeStored(conversationId: string) {
  const until = Date.now() + DEADLINE;
  for (;;) {
    const r = await fetch(`${p.url()}/conversations/${conversationId}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    const body = (await r.json()) as { messages: { role: string; text: string }[] };
    if (body.messages.some((m) => m.role === 'handoff' && m.text === 'offline')) return;
    if (Date.now() > until) throw new Error(`no offline notice within ${DEADLINE} ms: ${JSON.stringify(body.messages)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

beforeAll(async () => {
  ({ browser, llm, parley: p, close } = await startChromiumParley({ demo: { backend: true } }));
  await demoBackendReady(p);
  // The long customer: a tool call with a long argument (the demo backend has no such order: it fails), a reply, then
  // handed over 11 minutes ago with nobody online (past handoff.offline_after_minutes: the customer is told).
  llm.script({ toolCalls: [{ name: 'getOrderStatus', args: { orderId: LONG_ID } }] }, { text: 'I could not find that order.' });
  llm.fallback({ text: 'Hello!' });
  const w = await startWidgetSession(p.url(), { customerId: 'long-customer', email: LONG_ADDRESS });
  w.send({ type: 'message', id: 'm1', text: `Where is order ${LONG_ID}?` });
  await w.next((f) => f.type === 'message' && f.text === 'I could not find that order.', DEADLINE);
  await post(p, '/__test__/clock', { offsetMs: -11 * 60_000 });
  expect((await handOver(LONG_CONV)).status).toBe(200);
  await post(p, '/__test__/clock', { offsetMs: 0 });
  w.close();
  await offlineNoticeStored(LONG_CONV);
  await waitingCustomer('late-a', 'late-a@example.com', 7);
  await waitingCustomer('late-b', 'late-b@example.com', 6);
  await waitingCustomer('held', 'held@example.com', 0);
  for (const name of ['Ada', LONG_NAME]) {
    const email = `${name.split(' ')[0].toLowerCase()}@example.com`;
    const { token } = await createAgent(p, { email, name });
    expect((await post(p, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(200);
  }
  const cleo = await namedAgent(p, 'Cleo');
  const saved = await inboxApi(p, cleo).call('POST', '/saved-replies', {
    shortcut: 'refund',
    text: 'I have started your refund. It will reach your account within 5 to 10 working days, depending on your bank.',
  });
  expect(saved.status).toBe(201);
  expect((await inboxApi(p, cleo).act('conv_web_held', 'claim')).status).toBe(200);
}, 90_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await close();
});

async function signedIn(base: string, width: number, height: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${base}/inbox`);
  await page.locator('[data-testid=email-input]').fill('ada@example.com');
  await page.locator('[data-testid=password-input]').fill(PASSWORD);
  await page.locator('[data-testid=password-input]').press('Enter');
  await expect.poll(() => page.locator('[data-testid=live-state]').textContent(), { timeout: DEADLINE }).toBe('Live');
  return page;
}

async function openLong(page: Page) {
  await page.locator(`[data-testid=conversation-item][data-id="${LONG_CONV}"]`).click({ timeout: DEADLINE });
  await page.locator('[data-testid=tool-call]').waitFor({ timeout: DEADLINE });
}

const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;

/** Among late rows the selected one stands out; j moves to the next and its focus ring lies inside the list. */
async function lateRows(page: Page) {
  const late = page.locator('[data-testid=conversation-item].late');
  await expect.poll(() => late.count(), { timeout: DEADLINE }).toBe(3);
  const background = (i: number) => late.nth(i).evaluate((e) => getComputedStyle(e).backgroundColor);
  expect(await late.first().getAttribute('aria-current')).toBe('true');
  expect(await background(0)).not.toBe(await background(1));
  await page.locator('body').press('j');
  await expect.poll(() => late.nth(1).getAttribute('aria-current'), { timeout: DEADLINE }).toBe('true');
  await expect.poll(() => late.nth(1).evaluate((e) => e === document.activeElement), { timeout: DEADLINE }).toBe(true);
  const ring = await late.nth(1).evaluate((e) => {
    const s = getComputedStyle(e);
    return { style: s.outlineStyle, reach: parseFloat(s.outlineOffset) + parseFloat(s.outlineWidth) };
  });
  expect(ring.style).toBe('solid');
  expect(ring.reach).toBeLessThanOrEqual(0);
}

/** Cleo's conversation: Claim answers who has it; no Assign, Release or Resolve; the composer writes notes only, and says why. */
async function someoneElses(page: Page) {
  await page.locator('[data-testid=view-open]').click();
  await page.locator('[data-testid=conversation-item][data-id=conv_web_held]').click({ timeout: DEADLINE });
  await expect.poll(() => page.locator('[data-testid=holder]').textContent(), { timeout: DEADLINE }).toBe('Web · With Cleo');
  expect(await page.locator('[data-testid=claim]').count()).toBe(1);
  // The customer panel gives an address its width: "held@example.com" on one line (it was cut "held@example.co / m").
  const email = page.locator('[data-testid=customer-panel] dd').first();
  expect(await email.textContent()).toBe('held@example.com');
  const lineHeight = await email.evaluate((e) => parseFloat(getComputedStyle(e).lineHeight));
  expect((await email.boundingBox())!.height).toBeLessThan(1.5 * lineHeight);
  expect((await email.boundingBox())!.x).toBe((await page.locator('[data-testid=customer-panel] dt').first().boundingBox())!.x);
  expect(await page.locator('[data-testid=assign], [data-testid=release], [data-testid=resolve]').count()).toBe(0);
  const noteMode = page.locator('[data-testid=note-mode]');
  expect([await noteMode.isChecked(), await noteMode.isDisabled()]).toEqual([true, true]);
  expect(await page.locator('.composer .hint').textContent()).toBe('Cleo has this conversation: only internal notes');
  await page.locator('[data-testid=composer]').fill('Cleo: the customer called us too.');
  await page.locator('[data-testid=composer]').press('Enter');
  await expect
    .poll(() => page.locator('[data-testid=transcript] [data-kind=note]').allTextContents(), { timeout: DEADLINE })
    .toEqual([expect.stringContaining('Cleo: the customer called us too.')]);
}

describe('the agent inbox, looked at (Chromium)', () => {
  it('at 1,280 × 800: a long address, a long agent name, long tool JSON, late rows, the offline notice, no match, saved replies', async () => {
    const page = await signedIn(p.url(), 1280, 800);
    await withScreenshotOnFailure(page, 'inbox-look-1280', async () => {
      await openLong(page);
      // The header: the address on one line (cut, whole in its title), the Assign list inside the column, beside the buttons.
      const [head, title, assign, release] = await Promise.all(
        ['.conv-head', '[data-testid=conversation-title]', '[data-testid=assign]', '[data-testid=release]'].map((s) => box(page, s)),
      );
      expect(title.height).toBeLessThan(30);
      expect(await page.locator('[data-testid=conversation-title]').getAttribute('title')).toBe(LONG_ADDRESS);
      expect(assign.x + assign.width).toBeLessThanOrEqual(head.x + head.width - 16);
      // Claim, Assign, Release and Resolve on one row.
      const resolve = await box(page, '[data-testid=resolve]');
      for (const b of [release, resolve]) expect(Math.abs(b.y + b.height / 2 - (assign.y + assign.height / 2))).toBeLessThan(2);
      // The tool call's arguments and error, opened: the long id wraps inside its box.
      await page.locator('[data-testid=tool-call] summary').click();
      const pres = page.locator('[data-testid=tool-call] pre');
      expect(await pres.count()).toBe(2);
      expect(await pres.allTextContents()).toEqual([expect.stringContaining(LONG_ID), expect.stringContaining(LONG_ID)]);
      for (const pre of await pres.all()) expect(await pre.evaluate((e) => e.scrollWidth - e.clientWidth)).toBeLessThanOrEqual(0);
      // The offline notice says what happened (it used to read "An agent joined").
      const handoffs = await page.locator('[data-testid=transcript] [data-kind=handoff]').allTextContents();
      expect(handoffs).toEqual([expect.stringContaining('Handed to a person'), expect.stringContaining('No one has answered yet: the customer was told')]);
      // Presence: a long name does not squeeze its dot.
      await expect.poll(() => page.locator('.presence li').count(), { timeout: DEADLINE }).toBe(3);
      for (const dot of await page.locator('.presence .dot').all()) expect((await dot.boundingBox())!.width).toBe(8);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-1280.png') });
      expect(await axeViolations(page)).toEqual([]);

      await lateRows(page);

      // A search with no match says so (it used to say "Nobody is waiting.").
      await page.locator('[data-testid=search]').fill('nobody-like-this');
      await expect
        .poll(() => page.locator('[data-testid=empty-list]').textContent(), { timeout: DEADLINE })
        .toBe('No customer matches “nobody-like-this” in Waiting for a person.');
      await page.locator('[data-testid=search]').fill('');

      // A saved reply too long for its suggestion is cut with "…".
      await page.locator('[data-testid=composer]').fill('/ref');
      await expect
        .poll(() => page.locator('#suggestions li').allTextContents(), { timeout: DEADLINE })
        .toEqual([expect.stringMatching(/^\/refund — I have started .*…$/)]);
      await page.locator('[data-testid=composer]').fill('');

      await someoneElses(page);
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-1280-held.png') });
      expect(await axeViolations(page)).toEqual([]);
    });
  });

  it('at 768 × 1,024: the customer panel under the list, the composer on the screen, nothing wider than it', async () => {
    const page = await signedIn(p.url(), 768, 1024);
    await withScreenshotOnFailure(page, 'inbox-look-768', async () => {
      await openLong(page);
      await page.locator('[data-testid=customer-panel]').waitFor({ timeout: DEADLINE });
      const [send, list, customer] = await Promise.all(['[data-testid=send]', '.middle', '[data-testid=customer-panel]'].map((s) => box(page, s)));
      expect(send.y + send.height).toBeLessThanOrEqual(1024);
      expect(customer.x).toBe(list.x);
      expect(customer.y).toBeGreaterThanOrEqual(list.y + list.height);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(768);
      const [head, assign] = await Promise.all(['.conv-head', '[data-testid=assign]'].map((s) => box(page, s)));
      expect(assign.x + assign.width).toBeLessThanOrEqual(head.x + head.width - 16);
      // Claiming says so in a toast, which leaves the Send button free (it used to sit on it, bottom right).
      await page.locator('[data-testid=conversation-item][data-id=conv_web_late-b]').click();
      await page.locator('[data-testid=claim]').click({ timeout: DEADLINE });
      await expect.poll(() => page.locator('[data-testid=toast]').textContent(), { timeout: DEADLINE }).toBe('Claimed.');
      const [toast, sendNow] = await Promise.all(['[data-testid=toast]', '[data-testid=send]'].map((s) => box(page, s)));
      const apart =
        toast.x + toast.width <= sendNow.x ||
        sendNow.x + sendNow.width <= toast.x ||
        toast.y + toast.height <= sendNow.y ||
        sendNow.y + sendNow.height <= toast.y;
      expect(apart).toBe(true);
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-768-claimed.png') });
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-768.png') });
      expect(await axeViolations(page)).toEqual([]);
    });
  });
});

describe('the agent inbox on a laptop (Chromium)', () => {
  it('at 1,024 × 768: the customer panel, under the list, scrolls and can be reached with the keyboard; axe finds no violations', async () => {
    const page = await signedIn(p.url(), 1024, 768);
    await withScreenshotOnFailure(page, 'inbox-look-1024', async () => {
      await openLong(page);
      await page.locator('[data-testid=customer-panel]').waitFor({ timeout: DEADLINE });
      const side = page.locator('[data-testid=side-slot]');
      // the details are taller than their room here: the slot scrolls (axe: a scrollable region must be focusable)
      expect(await side.evaluate((e) => e.scrollHeight > e.clientHeight)).toBe(true);
      await side.focus();
      await page.keyboard.press('End');
      await expect.poll(() => side.evaluate((e) => e.scrollTop), { timeout: DEADLINE }).toBeGreaterThan(0);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-1024.png') });
      expect(await axeViolations(page)).toEqual([]);
    });
  });
});

describe('the agent inbox when the server goes away (Chromium)', () => {
  let own: TestParley | undefined;
  afterAll(() => own?.close());

  it('says the connection is lost, loudly; a failed call says Parley cannot be reached; presence is not claimed meanwhile; Live again after a restart', async () => {
    const port = await freePort();
    const storagePath = tempDir();
    own = await startParley({ port, storagePath });
    for (const name of ['Ada', 'Bob']) {
      const { token } = await createAgent(own, { email: `${name.toLowerCase()}@example.com`, name });
      expect((await post(own, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(200);
    }
    // A customer handed over: Ada has the conversation open, with its Assign list (the team, and their presence).
    const w = await startWidgetSession(own.url(), { customerId: 'down', email: 'down@example.com' });
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE);
    w.close();
    const handoff = await fetch(`${own.url()}/conversations/conv_web_down/handoff`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(handoff.status).toBe(200);
    const page = await signedIn(own.url(), 1280, 800);
    await withScreenshotOnFailure(page, 'inbox-look-down', async () => {
      const live = page.locator('[data-testid=live-state]');
      const presence = page.locator('[data-testid=presence] li');
      const note = page.locator('[data-testid=presence-note]');
      const assignable = () => page.locator('[data-testid=assign] option:not([value=""])').allTextContents();
      await page.locator('[data-testid=conversation-item][data-id=conv_web_down]').click({ timeout: DEADLINE });
      await expect.poll(() => presence.allTextContents(), { timeout: DEADLINE }).toEqual(['Ada · online', 'Bob · offline']);
      await expect.poll(assignable, { timeout: DEADLINE }).toEqual(['Ada (online)', 'Bob (offline)']);
      const calm = await live.evaluate((e) => getComputedStyle(e).color);
      await own!.close();
      own = undefined;
      await expect.poll(() => live.textContent(), { timeout: DEADLINE }).toBe('Connection lost: reconnecting…');
      expect(await live.evaluate((e) => getComputedStyle(e).color)).not.toBe(calm);
      expect(await live.evaluate((e) => getComputedStyle(e).fontWeight)).toBe('600');
      // Nobody is claimed online (nor offline) while the feed is down, oneself included; the list says why.
      expect(await presence.allTextContents()).toEqual(['Ada · unknown', 'Bob · unknown']);
      expect(await note.textContent()).toBe('Presence unknown while offline');
      expect(await assignable()).toEqual(['Ada (unknown)', 'Bob (unknown)']);
      await page.locator('[data-testid=search]').fill('someone');
      await expect.poll(() => page.locator('[data-testid=toast]').textContent(), { timeout: DEADLINE }).toBe('Parley cannot be reached: try again in a moment');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-down.png') });
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 768, height: 1024 });
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-down-768.png') });
      expect(await axeViolations(page)).toEqual([]);
      own = await startParley({ port, storagePath });
      await expect.poll(() => live.textContent(), { timeout: 30_000 }).toBe('Live');
      expect(await live.evaluate((e) => getComputedStyle(e).color)).toBe(calm);
      // Told again by the server once the feed is back.
      await expect.poll(() => presence.allTextContents(), { timeout: DEADLINE }).toEqual(['Ada · online', 'Bob · offline']);
      expect(await note.textContent()).toBe('');
      await expect.poll(assignable, { timeout: DEADLINE }).toEqual(['Ada (online)', 'Bob (offline)']);
      await page.screenshot({ path: join(ARTIFACTS, 'inbox-look-back-768.png') });
    });
  }, 120_000);
});
