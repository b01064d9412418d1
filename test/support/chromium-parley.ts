// Headless Chromium and a Parley for e2e files, started together and closed together: with a fake OpenAI-compatible
// server the replies come from (startChromiumParley), or running the demo backend for every test (useDemoParley).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser } from './browser.ts';
import { demoBackendReady } from './demo-backend.ts';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { startParley, type TestParley } from './parley.ts';

type ParleyConfig = NonNullable<NonNullable<Parameters<typeof startParley>[0]>['config']>;

export interface ChromiumParley {
  browser: Browser;
  llm: FakeOpenAi;
  parley: TestParley;
  /** Closes the browser, then Parley, then the fake LLM. */
  close(): Promise<void>;
}

/** `config` goes over Parley's test configuration; its LLM is the fake one, model `fake-1` unless `config.llm` names another. */
export async function startChromiumParley(config: ParleyConfig = {}): Promise<ChromiumParley> {
  let browser: Browser | undefined;
  let llm: FakeOpenAi | undefined;
  let parley: TestParley | undefined;
  const close = async () => {
    await browser?.close();
    await parley?.close();
    await llm?.close();
  };
  try {
    browser = await launchBrowser();
    llm = await startFakeOpenAi();
    parley = await startParley({ config: { ...config, llm: { provider: 'openai', base_url: llm.url, model: 'fake-1', ...config.llm } } });
    return { browser, llm, parley, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A part of the setup, once the file's beforeAll has started it. */
function started<T>(part: T | undefined, hook: string): T {
  if (part === undefined) throw new Error(`${hook}: used before its beforeAll started it`);
  return part;
}

/** startChromiumParley for every test of the file: started before all tests, closed after them. */
export function useChromiumParley(config: ParleyConfig = {}, timeoutMs = 30_000): Omit<ChromiumParley, 'close'> {
  let all: ChromiumParley | undefined;
  beforeAll(async () => {
    all = await startChromiumParley(config);
  }, timeoutMs);
  afterAll(() => all?.close());
  return {
    get browser() {
      return started(all, 'useChromiumParley').browser;
    },
    get llm() {
      return started(all, 'useChromiumParley').llm;
    },
    get parley() {
      return started(all, 'useChromiumParley').parley;
    },
  };
}

export interface DemoParley {
  readonly browser: Browser;
  readonly parley: TestParley;
}

/**
 * For every test of the file: Chromium and a Parley running the demo backend (its functions registered), customers
 * signed in (no anonymous visitors), with `config` over that; started before all tests, closed after them.
 */
export function useDemoParley(config: ParleyConfig = {}, timeoutMs = 30_000): DemoParley {
  let browser: Browser | undefined;
  let parley: TestParley | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
    parley = await startParley({ config: { demo: { backend: true }, identity: { allow_anonymous: false }, ...config } });
    await demoBackendReady(parley);
  }, timeoutMs);
  afterAll(async () => {
    await browser?.close();
    await parley?.close();
  });
  return {
    get browser() {
      return started(browser, 'useDemoParley');
    },
    get parley() {
      return started(parley, 'useDemoParley');
    },
  };
}
