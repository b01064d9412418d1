// Parley's own pages — the demo, the dashboard, the inbox, the set-password page — load without asking for anything
// that is not there: every one used to ask for /favicon.ico, a 404 in the console of a support engineer who opens it
// to see why something failed. (The inbox's and the dashboard's "who is signed in?" call answers 401 when nobody is:
// that is their question, not a missing file.)
import { describe, expect, it } from 'vitest';
import { withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';

const demo = useDemoParley();

describe("Parley's pages in Chromium", () => {
  it('the demo, the dashboard, the inbox and the set-password page load with no 404', async () => {
    for (const path of ['/demo.html', '/telemetry', '/inbox', '/agents/set-password?token=pl_unknown']) {
      const page = await demo.browser.newPage();
      const missing: string[] = [];
      page.on('response', (r) => {
        if (r.status() === 404) missing.push(r.url());
      });
      // The browser's own favicon request is not a page request: its 404 shows only as a console error.
      page.on('console', (m) => {
        if (m.type() === 'error' && /status of 404/.test(m.text())) missing.push(m.text());
      });
      await withScreenshotOnFailure(page, `page-${path.replace(/\W+/g, '-')}`, async () => {
        await page.goto(`${demo.parley.url()}${path}`, { waitUntil: 'networkidle' });
        expect(missing, path).toEqual([]);
      });
      await page.close();
    }
  });
});
