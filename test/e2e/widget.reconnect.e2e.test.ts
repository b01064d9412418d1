// The widget across a server restart, in Chromium: the server goes away
// (status Reconnecting), a message typed meanwhile waits; the server comes
// back on the same port and data dir (status Connected) and the message is
// sent once, with its id, and answered once.
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { freePort } from '../support/free-port.ts';
import { startParley, tempDir, type TestParley } from '../support/parley.ts';
import { demoBackendReady } from '../support/demo-backend.ts';

let browser: Browser | undefined;
let parley: TestParley | undefined;
afterAll(async () => {
  await browser?.close();
  await parley?.close();
});

async function start(port: number, storagePath: string) {
  const p = await startParley({ port, storagePath, config: { demo: { backend: true }, identity: { allow_anonymous: false } } });
  await demoBackendReady(p, 'getOrderStatus');
  return p;
}

describe('widget reconnect in Chromium', () => {
  it('Reconnecting while the server is down; Connected after it restarts; a waiting message is sent and answered once', async () => {
    const port = await freePort();
    const storagePath = tempDir();
    browser = await launchBrowser();
    parley = await start(port, storagePath);
    const page = await browser.newPage();
    await withScreenshotOnFailure(page, 'widget-reconnect', async () => {
      await page.goto(`${parley!.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      const status = page.locator('[data-testid=status]');
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Online');

      await parley!.close();
      parley = undefined;
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Reconnecting');

      const input = page.locator('[data-testid=input]');
      await input.fill('What is the status of order 1003?');
      await input.press('Enter');
      const user = page.locator('[data-testid=message][data-role=user]');
      await expect.poll(() => user.getAttribute('data-delivered')).toBe('false');

      // The widget comes back only once the demo backend has registered its functions: a new turn does not wait for
      // a backend (src/conversations/tools-ready.ts), and one that reconnected first was answered without the order.
      await page.context().setOffline(true);
      parley = await start(port, storagePath);
      await page.context().setOffline(false);
      await expect.poll(() => status.textContent(), { timeout: 20_000 }).toBe('Online');
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(1);
      expect(await assistant.first().textContent()).toMatch(/1003.*delivered|delivered.*1003/s);
      expect(await user.getAttribute('data-delivered')).toBe('true');

      // answered once, stored once: after a short wait and after a reload (history from the server)
      await new Promise((r) => setTimeout(r, 500));
      expect(await assistant.count()).toBe(1);
      expect(await user.count()).toBe(1);
      await page.reload();
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Online');
      await expect.poll(() => page.locator('[data-testid=message]').count(), { timeout: 10_000 }).toBe(2);
    });
    await page.close();
  });
});
