// Issue 35, part 6 in real Chromium: the dashboard's Handoffs card — waiting now, handed over, time to first agent
// reply and to resolution, overall and per agent — from a known sequence on the injected clock (frozen an hour ago,
// moved by the test). axe-core finds no violations at 1,280 and 768 px. Screenshot: test-artifacts/dashboard-handoffs.png.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createClock } from '../../src/clock.ts';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { asService, newSignedInAgent, post } from '../support/agents.ts';
import { axeViolations } from '../support/axe.ts';

const MIN = 60_000;

let browser: Browser;
let p: TestParley;

beforeAll(async () => {
  browser = await launchBrowser();
  const clock = createClock(() => Date.now() - 60 * MIN);
  p = await startParley({ clock });
  const ada = await newSignedInAgent(p, 'ada@example.com');
  const asAda = { cookie: ada.cookie, 'x-csrf-token': ada.csrf };
  const a = await startWidgetSession(p.url(), { customerId: 'cust-a', email: 'cust-a@example.com' });
  a.send({ type: 'message', id: 'a1', text: 'I want to talk to a person' });
  await a.next((f) => f.type === 'status' && f.mode === 'human');
  clock.setOffset(2 * MIN);
  expect((await post(p, '/conversations/conv_web_cust-a/messages', { text: 'Ada here', author: { name: 'Ada' } }, asAda)).status).toBe(201);
  await a.next((f) => f.type === 'message' && f.role === 'agent');
  clock.setOffset(5 * MIN);
  expect((await post(p, '/conversations/conv_web_cust-a/release', {}, asAda)).status).toBe(200);
  await a.next((f) => f.type === 'status' && f.mode === 'assistant');
  const b = await startWidgetSession(p.url(), { customerId: 'cust-b', email: 'cust-b@example.com' });
  b.send({ type: 'message', id: 'b1', text: 'I want to talk to a person' });
  await b.next((f) => f.type === 'status' && f.mode === 'human');
  a.close();
  b.close();
  await p.services.telemetry.flush();
  expect((await fetch(`${p.url()}/api/v1/telemetry/handoffs`, { headers: asService })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await p?.close();
});

describe('the Handoffs card (Chromium)', () => {
  for (const width of [1280, 768]) {
    it(`at ${width} px: waiting, handed over, first reply and resolution overall and per agent; axe finds nothing`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 1200 } });
      await withScreenshotOnFailure(page, `dashboard-handoffs-${width}`, async () => {
        await page.goto(`${p.url()}/telemetry`);
        await page.evaluate((s) => sessionStorage.setItem('parley.secret', s), TEST_SECRET);
        await page.reload();
        const card = page.locator('[data-testid=handoffs-card]');
        await expect.poll(() => card.locator('[data-testid=handoffs-requested] .value').textContent(), { timeout: 20_000 }).toBe('2');
        expect(await card.locator('[data-testid=handoffs-waiting] .value').textContent()).toBe('1');
        expect(await card.locator('[data-testid=handoffs-first-reply] .value').textContent()).toBe('2 min');
        expect(await card.locator('[data-testid=handoffs-resolution] .value').textContent()).toBe('5 min');
        const rows = card.locator('[data-testid=handoff-agent-row]');
        expect(await rows.count()).toBe(1);
        expect(await rows.first().locator('td').allTextContents()).toEqual(['Ada', '1', '2 min (p90 2 min)', '1', '5 min (p90 5 min)']);
        expect(await axeViolations(page)).toEqual([]);
        await card.scrollIntoViewIfNeeded();
        if (width === 1280) await page.screenshot({ path: join(ARTIFACTS, 'dashboard-handoffs.png'), fullPage: true });
      });
      await page.close();
    });
  }
});
