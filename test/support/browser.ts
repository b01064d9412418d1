// Real headless Chromium (Debian's /usr/bin/chromium) through playwright-core.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/config/load.ts';

export const ARTIFACTS = join(PROJECT_ROOT, 'test-artifacts');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.PARLEY_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Runs `fn`; on failure saves a screenshot to test-artifacts/<name>.png and rethrows. */
export async function withScreenshotOnFailure<T>(page: Page, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    mkdirSync(ARTIFACTS, { recursive: true });
    const path = join(ARTIFACTS, `${name}-failure.png`);
    await page.screenshot({ path, fullPage: true }).catch(() => undefined);
    (err as Error).message += `\n(screenshot: ${path})`;
    throw err;
  }
}
