// "No" leads somewhere, in real Chromium against the demo: under "Did that answer your question?", "No" thanks the
// customer and offers "Talk to a person"; the click hands the conversation over (the agent API lists it waiting, with
// the customer's reason), the widget shows "A person from our team will join you…" and the offer goes. axe-core finds
// no violations with the offer shown. Screenshots: test-artifacts/widget-person-{390,1280}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CUSTOMER_ASKED_REASON } from '../../src/web/person.ts';
import { en } from '../../widget/src/strings.ts';
import { axeViolations } from '../support/axe.ts';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { TEST_SECRET } from '../support/parley.ts';

const demo = useDemoParley({}, 60_000);
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

const waiting = async () => {
  const res = await fetch(`${demo.parley.url()}/conversations?state=withHuman`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  return ((await res.json()) as any).items as any[];
};

describe('"No", then "Talk to a person" (Chromium)', () => {
  it('No → Talk to a person → the conversation waits for a person with the customer’s reason; the widget says a person will join', async () => {
    const context = await demo.browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-person', async () => {
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
      await page.locator('[data-testid=input]').fill('What is the status of order 1001?');
      await page.locator('[data-testid=input]').press('Enter');
      await page.locator('[data-testid=resolution-no]').click({ timeout: 30_000 });
      const person = page.locator('[data-testid=talk-to-person]');
      await person.waitFor({ timeout: 15_000 });
      expect(await person.textContent()).toBe(en.talkToPerson);
      expect(await page.locator('[data-testid=resolution-thanks]').isVisible()).toBe(true);
      expect(await axeViolations(page, '#parley-widget')).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'widget-person-390.png') });
      await page.setViewportSize({ width: 1280, height: 860 });
      await page.locator('[data-testid=panel]').evaluate((e) => Promise.all(e.getAnimations().map((a) => a.finished)));
      await page.screenshot({ path: join(ARTIFACTS, 'widget-person-1280.png') });
      expect(await waiting()).toEqual([]);

      await person.click();
      await expect.poll(() => page.locator('[data-testid=status-line]').allTextContents(), { timeout: 15_000 }).toEqual([en.statusHuman]);
      await expect
        .poll(waiting, { timeout: 15_000 })
        .toEqual([expect.objectContaining({ handoff: expect.objectContaining({ reason: CUSTOMER_ASKED_REASON }) })]);
      await expect.poll(() => person.isVisible()).toBe(false);
      await page.screenshot({ path: join(ARTIFACTS, 'widget-person-asked-1280.png') });
    });
    await context.close();
  }, 120_000);
});
