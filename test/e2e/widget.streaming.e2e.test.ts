// Issue 20: a streamed reply in real Chromium. The typing indicator shows until
// the first words; the text grows in one bubble that screen readers do not
// read; then the final message takes its place in the log (a live region), once.
import { describe, expect, it } from 'vitest';
import { withScreenshotOnFailure } from '../support/browser.ts';
import { useChromiumParley } from '../support/chromium-parley.ts';

const REPLY = 'Your order 1001 is packed and leaves our warehouse today; it should reach you by Friday.';

const e2e = useChromiumParley({ demo: { backend: true }, identity: { allow_anonymous: false } });

interface Snapshot {
  streaming: string | null;
  streamingHidden: string | null;
  typingShown: boolean;
  finals: string[];
}

describe('a streamed reply in Chromium', () => {
  it('typing until the first words, the text grows in one bubble, then the final message replaces it and is announced once', async () => {
    // The model thinks 600 ms, then writes its reply a word every 120 ms.
    e2e.llm.fallback({ text: REPLY, delayMs: 600, chunkDelayMs: 120 });
    const page = await e2e.browser.newPage();
    await withScreenshotOnFailure(page, 'widget-streaming', async () => {
      // Record the log after every change, and every node added to it (what a live region announces).
      await page.addInitScript(() => {
        const w = window as unknown as { __snapshots: unknown[]; __added: { text: string; hidden: boolean }[] };
        w.__snapshots = [];
        w.__added = [];
        const attach = Element.prototype.attachShadow;
        Element.prototype.attachShadow = function (init: ShadowRootInit) {
          const root = attach.call(this, init);
          new MutationObserver((mutations) => {
            const log = root.querySelector('[data-testid=messages]');
            if (!log) return;
            for (const m of mutations)
              for (const n of m.addedNodes)
                if (m.target === log && n instanceof HTMLElement)
                  w.__added.push({ text: n.textContent ?? '', hidden: n.getAttribute('aria-hidden') === 'true' });
            const streaming = root.querySelector('[data-testid=streaming]');
            const typing = root.querySelector('[data-testid=typing]') as HTMLElement | null;
            w.__snapshots.push({
              streaming: streaming?.textContent ?? null,
              streamingHidden: streaming?.getAttribute('aria-hidden') ?? null,
              typingShown: typing ? !typing.hidden : false,
              finals: [...root.querySelectorAll('[data-testid=message][data-role=assistant] .text')].map((e) => e.textContent ?? ''),
            });
          }).observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
          return root;
        };
      });
      await page.goto(`${e2e.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').textContent(), { timeout: 10_000 }).toBe('Online');
      const input = page.locator('[data-testid=input]');
      await input.fill('Where is my order?');
      await input.press('Enter');

      // While it is being written: the screen reader's view of the log has none of the partial text.
      const streaming = page.locator('[data-testid=streaming]');
      await expect.poll(() => streaming.textContent(), { timeout: 10_000 }).toMatch(/^Your order 1001 is packed/);
      const log = page.locator('[data-testid=messages]');
      expect(await log.ariaSnapshot()).not.toContain('Your order');
      expect(await page.locator('[data-testid=typing]').isVisible()).toBe(false);

      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 15_000 }).toBe(1);
      // the final message row: its text, and the time it brings (the streamed bubble had none)
      expect(await assistant.first().textContent()).toBe(`Support: ${REPLY}just now`);
      expect(await assistant.first().locator('[data-testid=time]').isVisible()).toBe(true);
      expect(await streaming.count()).toBe(0);
      expect(await log.ariaSnapshot()).toContain(REPLY);

      const snapshots = (await page.evaluate(() => (window as unknown as { __snapshots: Snapshot[] }).__snapshots)) as Snapshot[];
      const firstWords = snapshots.findIndex((s) => s.streaming !== null);
      // the typing indicator before the first words, not once they show
      expect(snapshots.slice(0, firstWords).some((s) => s.typingShown)).toBe(true);
      const writing = snapshots.filter((s) => s.streaming !== null);
      expect(writing.every((s) => !s.typingShown && s.streamingHidden === 'true' && s.finals.length === 0)).toBe(true);
      // the text grows: many different lengths, each the start of the reply, each longer than the last
      const texts = [...new Set(writing.map((s) => s.streaming!))];
      expect(texts.length).toBeGreaterThanOrEqual(5);
      for (const [i, t] of texts.entries()) {
        expect(REPLY.startsWith(t)).toBe(true);
        if (i > 0) expect(t.length).toBeGreaterThan(texts[i - 1].length);
      }
      // then the final message, with no streamed bubble beside it
      const end = snapshots.at(-1)!;
      expect(end.streaming).toBeNull();
      expect(end.finals).toEqual([REPLY]);
      // screen readers: one node with the reply was added to the log that is not aria-hidden
      const added = (await page.evaluate(() => (window as unknown as { __added: { text: string; hidden: boolean }[] }).__added)) as {
        text: string;
        hidden: boolean;
      }[];
      expect(added.filter((a) => !a.hidden && a.text.includes('Your order'))).toEqual([{ text: `Support: ${REPLY}just now`, hidden: false }]);
    });
    await page.close();
  });
});
