// Issue 35 part 1 in real Chromium: the dashboard signs people in with email and password (a session cookie), not
// the service secret; a wrong password, a request without a session and a state-changing request without the CSRF
// token are refused. The one-time link of a new account opens the set-password form.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { createAgent, PASSWORD } from '../support/agents.ts';

let browser: Browser;
let p: TestParley;

beforeAll(async () => {
  browser = await launchBrowser();
  p = await startParley();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await p?.close();
});

describe('dashboard sign-in in Chromium', () => {
  it('the set-password link, then a wrong password refused, then signed in: the dashboard; CSRF and sessions enforced', async () => {
    const { setPasswordUrl } = await createAgent(p, { email: 'ada@example.com', name: 'Ada Admin', role: 'admin' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'dashboard-signin', async () => {
      await page.goto(`${p.url()}${setPasswordUrl}`);
      await page.locator('[data-testid=new-password-input]').waitFor();
      expect(await page.title()).toBe('Parley — choose your password');
      await page.locator('[data-testid=new-password-input]').fill(PASSWORD);
      await page.locator('[data-testid=new-password-input]').press('Enter');
      await expect.poll(() => page.locator('[data-testid=sign-in-notice]').textContent(), { timeout: 10_000 }).toContain('password is set');
      expect(await page.locator('[data-testid=sign-in-error]').textContent()).toBe('');
      expect(await page.locator('[data-testid=sign-in-notice] a').getAttribute('href')).toBe('/inbox');
      expect(await page.title()).toBe('Parley — telemetry');

      await page.locator('[data-testid=email-input]').fill('ada@example.com');
      await page.locator('[data-testid=password-input]').fill('not the password');
      await page.locator('[data-testid=password-input]').press('Enter');
      await expect.poll(() => page.locator('[data-testid=sign-in-error]').textContent(), { timeout: 10_000 }).toContain('Wrong email or password');
      expect(await page.locator('[data-testid=sign-in-notice]').count()).toBe(0);

      await page.locator('[data-testid=password-input]').fill(PASSWORD);
      await page.locator('[data-testid=password-input]').press('Enter');
      await expect.poll(() => page.locator('[data-testid=signed-in-as]').textContent(), { timeout: 10_000 }).toBe('Ada Admin (admin)');
      await page.locator('[data-testid=conversations]').waitFor();
      await expect.poll(() => page.locator('header span').first().textContent(), { timeout: 10_000 }).toMatch(/^updated /);
      // The cookie is HttpOnly: the page's script cannot read it; no secret is kept in storage.
      expect(await page.evaluate(() => document.cookie)).toBe('');
      expect(await page.evaluate(() => sessionStorage.getItem('parley.secret'))).toBeNull();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-signed-in.png'), fullPage: true });
      // A new server has no errors: the list says so on one line, not in its narrow time column.
      const noErrors = page.locator('[data-testid=errors] .empty');
      await expect.poll(() => noErrors.textContent(), { timeout: 10_000 }).toBe('No errors in this window.');
      expect((await noErrors.boundingBox())!.height).toBeLessThan(40); // one line and its padding: 31 px; two: 52

      // A state-changing request with the cookie but without the CSRF token is refused; with it, it passes.
      const attempt = (csrf?: string) =>
        page.evaluate(async (token) => {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (token) headers['x-csrf-token'] = token;
          const r = await fetch('/conversations/conv-none/handoff', { method: 'POST', headers, body: '{}' });
          return { status: r.status, code: ((await r.json()) as { error: { code: string } }).error.code };
        }, csrf);
      expect(await attempt()).toEqual({ status: 403, code: 'csrf_failed' });
      const csrf = await page.evaluate(async () => ((await (await fetch('/api/v1/agents/me')).json()) as { csrfToken: string }).csrfToken);
      expect(await attempt(csrf)).toEqual({ status: 404, code: 'conversation_not_found' });

      // Another browser (no session) is refused and shown the sign-in form.
      const stranger = await browser.newContext();
      const other = await stranger.newPage();
      await other.goto(`${p.url()}/telemetry`);
      await other.locator('[data-testid=sign-in-form]').waitFor();
      expect(await other.evaluate(async () => (await fetch('/api/v1/telemetry/summary')).status)).toBe(401);
      await stranger.close();

      // Signing out ends the session: a reload shows the sign-in form again.
      await page.locator('[data-testid=sign-out]').click();
      await page.locator('[data-testid=sign-in-form]').waitFor();
      await page.reload();
      await page.locator('[data-testid=sign-in-form]').waitFor();
      expect(await page.evaluate(async () => (await fetch('/api/v1/agents/me')).status)).toBe(401);
    });
    await context.close();
  });
});
