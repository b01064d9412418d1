// "Export as test" in real Chromium: a real conversation (widget protocol, the demo backend through the real SDK) is
// opened in the dashboard, its button downloads the scenario file, and that file replays green against a fresh Parley.
// axe-core finds no violations with the timeline and the button on the page. Screenshot: test-artifacts/dashboard-export.png.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startDemoBackend } from '../../examples/demo-backend/backend.ts';
import { targetOf } from '../../src/scenarios/embedded.ts';
import { runScenario } from '../../src/scenarios/runner.ts';
import { Scenario } from '../../src/scenarios/schema.ts';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { axeViolations } from '../support/axe.ts';

let browser: Browser;
const open: { close(): Promise<void> }[] = [];
let conversationId = '';

async function parleyWithDemo(): Promise<TestParley> {
  const parley = await startParley();
  open.push(parley);
  open.push(await startDemoBackend({ url: parley.url(), secret: TEST_SECRET }));
  const deadline = Date.now() + 30_000;
  while (parley.runtime.hub.catalog().length < 2) {
    if (Date.now() > deadline) throw new Error('the demo backend did not connect');
    await new Promise((r) => setTimeout(r, 50));
  }
  return parley;
}

let original: TestParley;

beforeAll(async () => {
  browser = await launchBrowser();
  original = await parleyWithDemo();
  const w = await startWidgetSession(original.url(), { customerId: 'dash-export', email: 'dash-export@example.com' });
  conversationId = w.frames.find((f) => f.type === 'ready')!.conversationId as string;
  w.send({ type: 'message', id: 'm1', text: 'What is the status of order 1002?' });
  await w.next((f) => f.type === 'message' && f.role === 'assistant', 30_000);
  w.send({ type: 'message', id: 'm2', text: 'Cancel order 1001' });
  const card = await w.next((f) => f.type === 'confirm', 30_000);
  w.send({ type: 'confirm', id: card.id, approve: true });
  await w.next((f) => f.type === 'message' && f.role === 'assistant' && String(f.text).includes('1001'), 30_000);
  w.close();
  await original.services.telemetry.flush();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  for (const o of open.reverse()) await o.close();
});

describe('Export as test (Chromium)', { timeout: 120_000 }, () => {
  it('downloads the conversation as a scenario that replays green; axe finds nothing', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true });
    await withScreenshotOnFailure(page, 'dashboard-export', async () => {
      await page.goto(`${original.url()}/telemetry`);
      await page.evaluate((s) => sessionStorage.setItem('parley.secret', s), TEST_SECRET);
      await page.reload();
      await page.locator('[data-testid=conversation-row]').first().click();
      await page.locator('[data-testid=timeline]').waitFor();
      const button = page.getByRole('button', { name: 'Export as test' });
      await button.waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
      expect(download.suggestedFilename()).toBe(`${conversationId}.scenario.yaml`);
      await expect.poll(() => page.locator('[data-testid=export-status]').textContent(), { timeout: 10_000 }).toBe(`Saved ${conversationId}.scenario.yaml`);
      const yaml = readFileSync((await download.path())!, 'utf8');
      expect(yaml.split('\n')[0]).toMatch(/^# yaml-language-server: \$schema=/);
      const scenario = Scenario.parse(parse(yaml));
      expect(scenario.steps.filter((s) => 'customer' in s)).toEqual([{ customer: 'What is the status of order 1002?' }, { customer: 'Cancel order 1001' }]);
      expect(scenario.steps).toContainEqual({ expect: { tool: 'cancelOrder', args: { orderId: '1001' }, confirmation: 'approve' } });
      expect(await axeViolations(page)).toEqual([]);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-export.png'), fullPage: true });

      const fresh = await parleyWithDemo();
      const replay = await runScenario(scenario, 'exported.scenario.yaml', targetOf(fresh));
      expect(replay.differences).toEqual([]);
      expect(replay.status).toBe('passed');
    });
    await page.close();
  });

  it('the route needs a credential and names an unknown conversation; the dashboard says why an export failed', async () => {
    const url = `${original.url()}/api/v1/conversations/${encodeURIComponent(conversationId)}/scenario`;
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBeTypeOf('string');
    const ok = await fetch(url, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(ok.headers.get('content-disposition')).toBe(`attachment; filename="${conversationId}.scenario.yaml"`);
    const missing = await fetch(`${original.url()}/api/v1/conversations/conv_nope/scenario`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'conversation_not_found', message: 'No conversation with this id' } });

    // The credential is refused by the time the button is pressed: the button says so instead of saving nothing.
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await withScreenshotOnFailure(page, 'dashboard-export-refused', async () => {
      await page.goto(`${original.url()}/telemetry`);
      await page.evaluate((s) => sessionStorage.setItem('parley.secret', s), TEST_SECRET);
      await page.reload();
      await page.locator('[data-testid=conversation-row]').first().click();
      const button = page.getByRole('button', { name: 'Export as test' });
      await button.waitFor();
      await page.evaluate(() => sessionStorage.setItem('parley.secret', 'a-secret-no-longer-valid'));
      await button.click();
      await expect
        .poll(() => page.locator('[data-testid=export-status]').textContent(), { timeout: 10_000 })
        .toBe('Could not export: The service secret was refused');
    });
    await page.close();
  });
});
