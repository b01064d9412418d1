// Issue 35, part 5 in real Chromium: outside the team's opening hours the widget says when the team is back (in the
// customer's locale and clock) and offers a small email form; a bad address is refused in words, a good one is stored
// with the customer and confirmed; the form does not come back on reload. axe-core finds no violations. The server's
// clock is the injected one, frozen on a Friday evening in Berlin. Screenshot: test-artifacts/widget-handoff-email.png.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createClock } from '../../src/clock.ts';
import { ARTIFACTS, launchBrowser, withScreenshotOnFailure } from '../support/browser.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { axeViolations } from '../support/axe.ts';

let browser: Browser;
let parley: TestParley;

beforeAll(async () => {
  browser = await launchBrowser();
  // Friday 27 March 2026, 17:30 in Berlin: closed until Monday 09:00 (summer time by then).
  const clock = createClock(() => Date.UTC(2026, 2, 27, 16, 30));
  parley = await startParley({
    clock,
    config: {
      demo: { backend: true },
      identity: { allow_anonymous: false },
      handoff: { business_hours: { time_zone: 'Europe/Berlin', weekly: { mon: ['09:00-17:00'], fri: ['09:00-17:00'] } } },
    },
  });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await parley?.close();
});

describe('the email form while waiting for a person (Chromium)', () => {
  it('closed: "back Monday 9:00 AM" in the customer’s clock; a bad address is refused, a good one stored and confirmed; not asked again', async () => {
    const page = await browser.newPage({ locale: 'en-US', timezoneId: 'Europe/Berlin', viewport: { width: 1280, height: 900 } });
    await withScreenshotOnFailure(page, 'widget-handoff-email', async () => {
      await page.goto(`${parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').textContent(), { timeout: 15_000 }).toBe('Online');
      const input = page.locator('[data-testid=input]');
      await input.fill('I want to talk to a person');
      await input.press('Enter');
      const text = page.locator('[data-testid=handoff-text]');
      await expect.poll(() => text.textContent(), { timeout: 15_000 }).toBe('Our team is away right now and back Monday 9:00 AM.');
      const form = page.locator('[data-testid=email-form]');
      expect(await form.isVisible()).toBe(true);
      // 16 px like the input bar: a phone does not zoom the page in when the field takes the focus.
      expect(await page.locator('[data-testid=email-input]').evaluate((e) => getComputedStyle(e).fontSize)).toBe('16px');

      // The line above no longer promises "shortly".
      expect(await page.locator('[data-testid=status-line]').first().textContent()).toBe('Your conversation is with our team now.');

      await page.locator('[data-testid=email-input]').fill('not an address');
      await page.locator('[data-testid=email-send]').click();
      await expect.poll(() => page.locator('[data-testid=email-error]').textContent()).toBe('Please enter a valid email address.');
      // The field itself is marked too (red, like the input bar's too-long text), not only the line under it.
      expect(await page.locator('[data-testid=email-input]').evaluate((e) => getComputedStyle(e).borderColor)).toBe('rgb(176, 0, 32)');
      expect(await axeViolations(page, '#parley-widget')).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'widget-handoff-email-form.png') });

      await page.locator('[data-testid=email-input]').fill('ada@example.com');
      await page.locator('[data-testid=email-input]').press('Enter');
      const saved = page.locator('[data-testid=email-saved]');
      await expect.poll(() => saved.textContent(), { timeout: 15_000 }).toBe('Thanks! We will reply to ada@example.com or here.');
      expect(await form.isVisible()).toBe(false);
      const customerId = (await parley.services.store.conversations.withHuman({ limit: 5 }))[0].customerId;
      expect((await parley.services.store.customers.get(customerId))?.contact?.email).toBe('ada@example.com');
      expect(await axeViolations(page, '#parley-widget')).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'widget-handoff-email.png') });

      await page.reload();
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => saved.textContent(), { timeout: 15_000 }).toBe('Thanks! We will reply to ada@example.com or here.');
      expect(await text.textContent()).toBe('Our team is away right now and back Monday 9:00 AM.');
      expect(await form.isVisible()).toBe(false);
    });
    await page.close();
  });
});
