// Issue 33 part 4 in real Chromium: replies render a safe subset of Markdown (paragraphs, bold, italic, lists, code,
// links that open in a new tab), and no HTML from any message ever runs: the XSS vectors of
// test/fixtures/xss-vectors.txt (OWASP's filter-evasion cheat sheet, plus Markdown link targets) go through an
// assistant reply, a person's messages and proactive messages; no dialog opens, no flag is set, and the transcript
// holds no element with an on* attribute, no javascript: URL, nothing but the renderer's own tags.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { conversationIdFor } from '../../src/conversations/history.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useChromiumParley } from '../support/chromium-parley.ts';
import { TEST_SECRET } from '../support/parley.ts';
import { axeViolations } from '../support/axe.ts';

const VECTORS = readFileSync(join(PROJECT_ROOT, 'test/fixtures/xss-vectors.txt'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() && !l.startsWith('#'));

const MARKDOWN = [
  'Here is what I found for **order 1001**:',
  '',
  '- Status: *shipped*',
  '- Carrier: `UPS 1Z999`',
  '',
  'Track it at [the carrier’s page](https://www.ups.com/track?num=1Z999) or write to mailto:help@example.com.',
  '',
  '```',
  'ref: 1001-A',
  'curl -H "Authorization: Bearer 0123456789abcdef0123456789abcdef" https://api.example.com/v1/orders/1001/tracking',
  '```',
  '',
  // A long word and a long link: wrapped inside the bubble, never wider than the log (see the phone checks below).
  'Reference Z0000000000000000000000000000000000000000000000000000000001001 at https://www.example.com/orders/1001/tracking/details/a-very-long-path.',
].join('\n');

/** How far the widest thing in the first reply reaches past the log, and whether the log scrolls sideways. */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const root = document.querySelector('#parley-widget')!.shadowRoot!;
    const log = root.querySelector<HTMLElement>('[data-testid=messages]')!;
    const box = log.getBoundingClientRect();
    const parts = [...root.querySelectorAll('[data-testid=message][data-role=assistant]')].slice(0, 1).flatMap((m) => [m, ...m.querySelectorAll('*')]);
    const past = Math.max(0, ...parts.map((e) => e.getBoundingClientRect().right - box.right));
    return { past: Math.round(past), sideways: log.scrollWidth - log.clientWidth };
  });

/** Chunks of whole vectors, each under the API's text limit. */
function chunks(lines: string[], max = 3500): string[] {
  const out: string[] = [''];
  for (const l of lines) {
    if (out[out.length - 1].length + l.length + 2 > max) out.push('');
    out[out.length - 1] += `${l}\n\n`;
  }
  return out.map((c) => c.trim());
}

const e2e = useChromiumParley({
  demo: { backend: true },
  identity: { allow_anonymous: false },
  proactive: { enabled: true },
});

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${e2e.parley.url()}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

/** What ran or could run in the widget's shadow DOM. */
const inspect = (page: Page) =>
  page.evaluate(() => {
    const root = document.querySelector('#parley-widget')!.shadowRoot!;
    // The widget's own controls in the log (the rating card, the email form) are not message content.
    const all = [...root.querySelectorAll('[data-testid=messages] *')].filter((e) => !e.closest('[data-testid=rating], [data-testid=email-form]'));
    const allowed = new Set(['DIV', 'SPAN', 'P', 'BR', 'STRONG', 'EM', 'CODE', 'PRE', 'UL', 'OL', 'LI', 'A', 'TIME', 'BUTTON', 'I']);
    return {
      pwned: (window as unknown as { __pwned?: number }).__pwned ?? 0,
      onAttributes: all.flatMap((e) => [...e.attributes].filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => `${e.tagName} ${a.name}`)),
      badUrls: all.flatMap((e) =>
        ['href', 'src', 'action', 'formaction', 'data', 'background']
          .map((n) => e.getAttribute(n))
          .filter((v): v is string => v !== null && !/^(https?:|mailto:)/i.test(v.trim())),
      ),
      foreignTags: [...new Set(all.map((e) => e.tagName).filter((t) => !allowed.has(t)))],
      links: [...root.querySelectorAll('.md a')].map((a) => ({ href: a.getAttribute('href'), rel: a.getAttribute('rel'), target: a.getAttribute('target') })),
    };
  });

describe('replies people can read, and no message HTML ever runs (Chromium)', () => {
  it('Markdown renders; every XSS vector is inert in assistant, agent and proactive messages', async () => {
    e2e.llm.fallback({ text: `${MARKDOWN}\n\n${VECTORS.join('\n\n')}` });
    const page = await e2e.browser.newPage({ viewport: { width: 1280, height: 900 } });
    let dialogs = 0;
    page.on('dialog', (d) => {
      dialogs++;
      void d.dismiss();
    });
    await withScreenshotOnFailure(page, 'widget-markdown', async () => {
      const session = page.waitForResponse((r) => r.url().endsWith('/demo/session'));
      await page.goto(`${e2e.parley.url()}/demo.html`);
      const { customerId } = (await (await session).json()) as { customerId: string };
      const visitor = (await page.context().cookies()).find((c) => c.name === 'parley_demo_visitor')!.value;
      await page.locator('[data-testid=launcher]').click();
      await expect.poll(() => page.locator('[data-testid=status]').getAttribute('data-state'), { timeout: 15_000 }).toBe('Connected');
      const input = page.locator('[data-testid=input]');
      await input.fill('Where is my order 1001?');
      await input.press('Enter');
      const assistant = page.locator('[data-testid=message][data-role=assistant]');
      await expect.poll(() => assistant.count(), { timeout: 20_000 }).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, 'widget-markdown-desktop.png') });
      // A code block, a long word and a long link stay inside the bubble and the log, on a desktop and on phones.
      expect(await overflow(page)).toEqual({ past: 0, sideways: 0 });
      expect(await axeViolations(page, '#parley-widget')).toEqual([]);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(ARTIFACTS, 'widget-markdown-phone.png') });
      expect(await overflow(page)).toEqual({ past: 0, sideways: 0 });
      await page.setViewportSize({ width: 320, height: 640 });
      expect(await overflow(page)).toEqual({ past: 0, sideways: 0 });
      await page.setViewportSize({ width: 1280, height: 900 });

      // The Markdown part of the reply.
      const md = assistant.first().locator('.md');
      expect(await md.locator('strong').first().textContent()).toBe('order 1001');
      expect(await md.locator('ul').first().locator('li').count()).toBe(2);
      expect(await md.locator('li em').first().textContent()).toBe('shipped');
      expect(await md.locator('li code').first().textContent()).toBe('UPS 1Z999');
      expect(await md.locator('pre code').first().textContent()).toBe(
        'ref: 1001-A\ncurl -H "Authorization: Bearer 0123456789abcdef0123456789abcdef" https://api.example.com/v1/orders/1001/tracking',
      );
      const carrier = md.locator('a', { hasText: 'the carrier’s page' });
      expect(await carrier.getAttribute('href')).toBe('https://www.ups.com/track?num=1Z999');
      expect(await carrier.getAttribute('target')).toBe('_blank');
      expect(await carrier.getAttribute('rel')).toBe('noopener noreferrer nofollow');
      expect(await md.locator('a[href="mailto:help@example.com"]').count()).toBe(1);
      // A link is really clickable: it opens a new tab with the URL (the network is not reached: the route is stubbed).
      await page.context().route('https://www.ups.com/**', (r) => r.fulfill({ status: 200, contentType: 'text/plain', body: 'tracking' }));
      const [tab] = await Promise.all([page.context().waitForEvent('page'), carrier.click()]);
      await tab.waitForLoadState();
      expect(tab.url()).toBe('https://www.ups.com/track?num=1Z999');
      await tab.close();

      // Proactive messages (opted in), then a person's messages (handoff), each carrying the whole corpus.
      const externalId = `demo-${visitor}`;
      expect((await api('POST', '/proactive/opt-in', { customerExternalId: externalId, optIn: true })).status).toBe(200);
      const parts = chunks(VECTORS);
      for (const content of parts) {
        const r = await api('POST', '/proactive', { customerExternalId: externalId, channel: 'web', content });
        expect(r.body).toMatchObject({ accepted: true });
      }
      const conversationId = conversationIdFor(customerId, 'web');
      expect((await api('POST', `/conversations/${conversationId}/handoff`, {})).status).toBeLessThan(300);
      for (const text of parts) {
        expect((await api('POST', `/conversations/${conversationId}/messages`, { text, author: { name: 'Dana' } })).status).toBe(201);
      }
      await expect.poll(() => assistant.count(), { timeout: 20_000 }).toBe(1 + parts.length);
      await expect.poll(() => page.locator('[data-testid=message][data-role=agent]').count(), { timeout: 20_000 }).toBe(parts.length);
      // Hover every bubble (onmouseover vectors) and give anything that would load a moment to do so.
      for (const row of await page.locator('.md').all()) await row.hover().catch(() => {});
      await page.waitForLoadState('networkidle');

      const seen = await inspect(page);
      expect(dialogs).toBe(0);
      expect(seen.pwned).toBe(0);
      expect(seen.onAttributes).toEqual([]);
      expect(seen.badUrls).toEqual([]);
      expect(seen.foreignTags).toEqual([]);
      for (const l of seen.links) expect(l).toMatchObject({ rel: 'noopener noreferrer nofollow', target: '_blank' });
      expect(seen.links.some((l) => /^https:/.test(l.href ?? ''))).toBe(true);
      // The vectors are shown as text, not dropped.
      expect(await assistant.first().textContent()).toContain("<script>window.__pwned=1;alert('XSS')</script>");
    });
    await page.close();
  }, 120_000);
});
