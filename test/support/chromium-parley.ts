// For e2e files whose replies come from an LLM: headless Chromium, a fake OpenAI-compatible server and a Parley that
// answers through it, started together and closed together.
import type { Browser } from 'playwright-core';
import { launchBrowser } from './browser.ts';
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
