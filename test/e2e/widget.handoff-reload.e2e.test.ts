// In real Chromium against the demo: the customer asks for a person, Ada answers from the agent API and releases, and
// after a reload the widget shows the same transcript as live — "A person from our team will join you…", "Ada joined
// the conversation", Ada's message, "You are chatting with the assistant again." — in the same order, and in each
// shipped language the same lines as live. Screenshots: test-artifacts/widget-handoff-reload-{390,1280}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ar } from '../../widget/src/strings-ar.ts';
import { de } from '../../widget/src/strings-de.ts';
import { es } from '../../widget/src/strings-es.ts';
import { fr } from '../../widget/src/strings-fr.ts';
import { he } from '../../widget/src/strings-he.ts';
import { en, fill, type Strings } from '../../widget/src/strings.ts';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { restartDemoWidget } from '../support/demo-widget.ts';
import { TEST_SECRET } from '../support/parley.ts';

const demo = useDemoParley({}, 60_000);
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

const api = async (method: string, path: string, body?: unknown) => {
  const headers: Record<string, string> = { authorization: `Bearer ${TEST_SECRET}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${demo.parley.url()}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await res.json()) as any;
};

const connected = (page: Page) => expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');

/** The log as the customer reads it, in order: each message's role and words, each status line's words. */
const transcript = (page: Page) =>
  page
    .locator('[data-testid=message], [data-testid=status-line]')
    .evaluateAll((nodes) =>
      nodes.map((n) =>
        n.getAttribute('data-testid') === 'status-line'
          ? `status: ${n.textContent}`
          : `${n.getAttribute('data-role')}: ${n.querySelector('.text')?.textContent}`,
      ),
    );

const lines = (s: Strings) => [s.statusHuman, fill(s.statusAgentJoined, { name: 'Ada' }), s.statusAssistant];

describe('the handoff lines after a reload (Chromium)', () => {
  it('handed over, Ada joined, the assistant back: the same transcript after a reload, in every shipped language', async () => {
    const context = await demo.browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await withScreenshotOnFailure(page, 'widget-handoff-reload', async () => {
      await page.goto(`${demo.parley.url()}/demo.html`);
      await page.locator('[data-testid=launcher]').click();
      await connected(page);
      const input = page.locator('[data-testid=input]');
      await input.fill('I want to talk to a person');
      await input.press('Enter');
      const status = page.locator('[data-testid=status-line]');
      await expect.poll(() => status.count(), { timeout: 15_000 }).toBe(1);
      const waiting = await api('GET', '/conversations?state=withHuman');
      const id = waiting.items[0].conversationId as string;
      await api('POST', `/conversations/${id}/messages`, { text: 'Hi, Ada here. I will look into it.', author: { name: 'Ada' } });
      await expect.poll(() => status.count(), { timeout: 15_000 }).toBe(2);
      await api('POST', `/conversations/${id}/release`);
      await expect.poll(() => status.count(), { timeout: 15_000 }).toBe(3);
      const live = await transcript(page);
      expect(live).toEqual([
        'user: I want to talk to a person',
        `status: ${en.statusHuman}`,
        `status: ${fill(en.statusAgentJoined, { name: 'Ada' })}`,
        'agent: Hi, Ada here. I will look into it.',
        `status: ${en.statusAssistant}`,
      ]);

      await page.reload();
      await page.locator('[data-testid=launcher]').click();
      await connected(page);
      await expect.poll(() => transcript(page), { timeout: 15_000 }).toEqual(live);
      // Shown, not announced again: the screen reader's live region does not read an old line out on load.
      expect(await page.locator('[data-testid=announcer]').textContent()).not.toContain(en.statusAssistant);
      await page.screenshot({ path: join(ARTIFACTS, 'widget-handoff-reload-390.png') });

      for (const [locale, s] of Object.entries({ es, de, fr, ar, he, en })) {
        await restartDemoWidget(page, { locale, open: true });
        await connected(page);
        await expect.poll(() => status.allTextContents(), { timeout: 15_000 }).toEqual(lines(s));
      }
      await page.setViewportSize({ width: 1280, height: 860 });
      await page.locator('[data-testid=panel]').evaluate((e) => Promise.all(e.getAnimations().map((a) => a.finished)));
      await page.screenshot({ path: join(ARTIFACTS, 'widget-handoff-reload-1280.png') });
    });
    await context.close();
  }, 120_000);
});
