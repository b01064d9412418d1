// Issue 4: the demo in a real browser: launcher, Connecting → Connected, an
// order question, a cancellation with a confirmation prompt, history after a
// reload; hostile text is shown as text.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createClient } from '../../sdk/src/index.ts';
import { withScreenshotOnFailure } from '../support/browser.ts';
import { TEST_SECRET } from '../support/parley.ts';
import { useDemoParley } from '../support/chromium-parley.ts';

const demo = useDemoParley();

const activeTestId = (page: Page) =>
  page.evaluate(() => document.getElementById('parley-widget')?.shadowRoot?.activeElement?.getAttribute('data-testid') ?? null);

describe('the demo page in Chromium', () => {
  it('connects, answers an order question, cancels with confirmation, keeps history after reload', async () => {
    const context = await demo.browser.newContext();
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-demo', async () => {
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      const status = page.locator('[data-testid=status]');
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Online');

      const input = page.locator('[data-testid=input]');
      await input.fill('What is the status of order 1001?');
      await input.press('Enter');
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(1);
      expect(await assistant.first().textContent()).toMatch(/1001.*processing|processing.*1001/s);
      // who wrote what, for screen readers (visually hidden prefixes)
      expect(await assistant.first().locator('.sr').first().textContent()).toBe('Support: ');
      expect(await page.locator('[data-testid=message][data-role=user] .sr').first().textContent()).toBe('You: ');
      expect(await page.locator('.dot').getAttribute('aria-hidden')).toBe('true');

      await input.fill('Cancel order 1001');
      await page.locator('[data-testid=send]').click();
      const confirm = page.locator('[data-testid=confirm]');
      await confirm.waitFor({ timeout: 10_000 });
      expect(await confirm.textContent()).toContain('1001');
      await page.locator('[data-testid=approve]').click();
      // focus returns to the input once the answer is sent
      expect(await activeTestId(page)).toBe('input');
      await expect.poll(() => assistant.count(), { timeout: 10_000 }).toBe(2);
      expect(await assistant.nth(1).textContent()).toMatch(/cancelled/i);

      await page.reload();
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Online');
      await expect.poll(() => page.locator('[data-testid=message]').count(), { timeout: 10_000 }).toBe(4);
      const texts = await page.locator('[data-testid=message]').allTextContents();
      expect(texts.join('\n')).toContain('Cancel order 1001');
    });
    await context.close();
  });

  it('a confirmation arriving while the customer types does not take the focus: the text stays, nothing is approved', async () => {
    const page = await demo.browser.newPage();
    await withScreenshotOnFailure(page, 'widget-typing-confirm', async () => {
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').textContent(), { timeout: 10_000 }).toBe('Online');
      const input = page.locator('[data-testid=input]');
      await input.fill('Cancel order 1001');
      await input.press('Enter');
      // Keep typing (spaces included) until the prompt shows, then type on: every key goes where focus is.
      const confirm = page.locator('[data-testid=confirm]');
      const phrase = 'wait i changed my mind ';
      let typed = '';
      for (let i = 0; (await confirm.count()) === 0; i++) {
        if (i > 2000) throw new Error('no confirmation prompt');
        await page.keyboard.type(phrase[i % phrase.length]);
        typed += phrase[i % phrase.length];
      }
      await page.keyboard.type(' do not cancel it ');
      typed += ' do not cancel it ';
      expect(await input.inputValue()).toBe(typed);
      expect(await activeTestId(page)).toBe('input');
      expect(await page.locator('[data-testid=announcer]').textContent()).toMatch(/confirm: Cancel order 1001\?/i);
      await new Promise((r) => setTimeout(r, 300));
      expect(await page.locator('[data-testid=approve]').isDisabled()).toBe(false);
      expect(await page.locator('[data-testid=message][data-role=assistant]').count()).toBe(0);
      // and the prompt is reachable with the keyboard: Shift+Tab from the input lands on Decline
      await page.keyboard.press('Shift+Tab');
      expect(await activeTestId(page)).toBe('decline');
    });
    await page.close();
  });

  it('a message sent while a confirmation waits is told to wait for the card; once the card is answered it is answered', async () => {
    const page = await demo.browser.newPage();
    await withScreenshotOnFailure(page, 'widget-typed-while-confirming', async () => {
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').textContent(), { timeout: 10_000 }).toBe('Online');
      const input = page.locator('[data-testid=input]');
      await input.fill('Cancel order 1001');
      await input.press('Enter');
      await page.locator('[data-testid=confirm]').waitFor({ timeout: 10_000 });
      const notice = page.locator('[data-testid=notice]');
      expect(await notice.isHidden()).toBe(true);
      // It used to sit there with no answer and no word why, until the card was answered or expired (5 minutes).
      await input.fill('Actually, can I talk to a person?');
      await input.press('Enter');
      await expect
        .poll(() => notice.textContent(), { timeout: 10_000 })
        .toBe('Please answer the question above first (Approve or Decline): your message will be answered after that.');
      expect(await notice.isVisible()).toBe(true);
      await page.locator('[data-testid=decline]').click();
      await expect.poll(() => notice.isHidden(), { timeout: 10_000 }).toBe(true);
      // then the waiting message has its turn: the customer asked for a person
      await expect
        .poll(() => page.locator('[data-testid=status-line]').allTextContents(), { timeout: 20_000 })
        .toContain('A person from our team will join you here shortly.');
    });
    await page.close();
  });

  it('shows the status Connecting before Connected', async () => {
    const page = await demo.browser.newPage();
    await withScreenshotOnFailure(page, 'widget-status', async () => {
      // Record every status text the widget shows: a MutationObserver on its shadow root runs after each
      // change (a microtask), so a status that lasts only until the next task is still seen.
      await page.addInitScript(() => {
        const seen: string[] = ((window as unknown as { __statuses: string[] }).__statuses = []);
        const attach = Element.prototype.attachShadow;
        Element.prototype.attachShadow = function (init: ShadowRootInit) {
          const root = attach.call(this, init);
          const record = () => {
            const s = root.querySelector('[data-testid=status]')?.textContent;
            if (s && seen[seen.length - 1] !== s) seen.push(s);
          };
          new MutationObserver(record).observe(root, { subtree: true, childList: true, characterData: true });
          return root;
        };
      });
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.evaluate(() => (window as unknown as { __statuses: string[] }).__statuses.at(-1)), { timeout: 10_000 }).toBe('Online');
      const seen = await page.evaluate(() => (window as unknown as { __statuses: string[] }).__statuses);
      expect(seen[0]).toBe('Connecting');
    });
    await page.close();
  });

  it("the demo's instructions stay readable beside the open chat at 1280 and 1024 px: the panel covers none of them", async () => {
    const page = await demo.browser.newPage();
    await withScreenshotOnFailure(page, 'widget-demo-beside', async () => {
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      const panel = page.locator('[data-testid=panel]');
      await expect.poll(() => page.locator('[data-testid=status]').textContent(), { timeout: 10_000 }).toBe('Online');
      for (const width of [1280, 1024]) {
        await page.setViewportSize({ width, height: 800 });
        // the card of instructions, and every line in it (each list item and paragraph, as laid out), ends left of the panel
        await expect
          .poll(async () => {
            const left = (await panel.boundingBox())!.x;
            const rights = await page.locator('main .card, main .card > *').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right));
            return rights.filter((r) => r > left).length;
          })
          .toBe(0);
      }
    });
    await page.close();
  });

  it('assistant text with HTML is shown as text and runs nothing', async () => {
    const evil = createClient();
    evil.expose(
      'getOrderStatus',
      { description: 'Get the status of an order', parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
      async () => ({
        status: '<img src=x onerror="window.__xss=1">',
      }),
    );
    await evil.listen({ url: demo.parley.url(), secret: TEST_SECRET });
    const page = await demo.browser.newPage();
    try {
      await withScreenshotOnFailure(page, 'widget-xss', async () => {
        await page.goto(`${demo.parley.url()}/demo.html`);
        await page.locator('[data-testid=launcher]').click();
        await page.locator('[data-testid=input]').fill('status of order 1001');
        await page.locator('[data-testid=input]').press('Enter');
        const assistant = page.locator('[data-testid=message][data-role=assistant]').last();
        await expect.poll(() => assistant.textContent(), { timeout: 10_000 }).toContain('<img src=x onerror=');
        expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
        expect(await page.locator('[data-testid=messages] img').count()).toBe(0);
      });
    } finally {
      await page.close();
      await evil.close();
    }
  });
});
