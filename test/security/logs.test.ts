// Issue 15 part 5: logs stay small and clean. Measured on the real log output: a real Parley process's stdout for
// the size, and every line pino writes for the secrets.
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGraph } from '../support/fake-graph.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { spawnParley, startParley, TEST_SECRET, tempDir, type ParleyProcess } from '../support/parley.ts';
import { postWebhook, textMessage, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** A raw SDK connection (no client library: it sends exactly what the test says). */
async function rawSdk(url: string): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/sdk`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  open.push({ close: () => ws.terminate() });
  return ws;
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('log size', () => {
  it('an SDK error frame of 900 KB sent 40 times grows the log by a few KB per line, not 35 MB (real process, stdout)', async () => {
    const proc: ParleyProcess = await spawnParley({ storagePath: tempDir() });
    open.push({ close: () => proc.kill() });
    const ws = await rawSdk(proc.url);
    await new Promise((r) => setTimeout(r, 200));
    const before = Buffer.byteLength(proc.output());
    const message = 'A'.repeat(900 * 1024);
    for (let i = 0; i < 40; i++) ws.send(JSON.stringify({ type: 'error', code: `code-${i}`, message }));
    await expect.poll(() => count(proc.output(), 'SDK reported an error'), { timeout: 40_000 }).toBe(40);
    const grown = Buffer.byteLength(proc.output()) - before;
    expect(grown).toBeLessThan(40 * 2 * 1024);
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.includes('SDK reported an error'));
    for (const line of lines) expect(JSON.parse(line).message).toMatch(/^A{1024}…\[920576 more characters cut\]$/);
    // The connection stays up and the process answers.
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect((await fetch(`${proc.url}/health`)).status).toBe(200);
  }, 90_000); // a process to start and 36 MB of frames to parse, on a shared machine
});

describe('secrets in logs', () => {
  it('configured secrets are scrubbed by value from every line, also when an upstream or a client quotes them (trace level)', async () => {
    const graph = await startFakeGraph();
    open.push(graph);
    const llm = await startFakeOpenAi();
    open.push(llm);
    const wa = {
      phone_id: '1234567890',
      token: 'EAAG-wa-token-quoted-by-meta-0123',
      verify_token: 'verify-token-0123456',
      app_secret: 'app-secret-quoted-0123456',
    };
    const apiKey = 'sk-test-key-quoted-by-the-provider-0123';
    const p = await startParley({
      config: {
        logging: { level: 'trace' },
        llm: { provider: 'openai', base_url: llm.url, api_key: apiKey, model: 'm', max_retries: 0, fallback: { provider: 'offline' } },
        channels: { whatsapp: Object.assign({ enabled: true, provider: 'meta' as const, graph_url: graph.url, max_send_attempts: 1 }, wa) },
      },
    });
    open.push(p);
    const secrets = [TEST_SECRET, wa.token, wa.app_secret, wa.verify_token, apiKey];

    // Meta refuses the send and quotes the token back.
    graph.failNext({ status: 400, code: 190, message: `Invalid OAuth access token - Cannot parse access token: ${wa.token}` });
    llm.fallback({ status: 401, errorMessage: `Incorrect API key provided: ${apiKey}.` });
    expect((await postWebhook(p.url(), webhookBody([textMessage('+15550100001', 'hello')]), { secret: wa.app_secret })).status).toBe(200);
    await expect.poll(() => p.logs.some((l) => l.includes('job dead-lettered')), { timeout: 10_000 }).toBe(true);

    // A client quotes secrets in frames that are logged.
    const ws = await rawSdk(p.url());
    ws.send(
      JSON.stringify({ type: 'error', code: 'oops', message: `my config: secret=${TEST_SECRET} app_secret="${wa.app_secret}" verify=${wa.verify_token}` }),
    );
    await expect.poll(() => p.logs.some((l) => l.includes('SDK reported an error')), { timeout: 15_000 }).toBe(true);

    const all = p.logs.join('');
    for (const s of secrets) expect(all.includes(s), `a log line contains ${s}`).toBe(false);
    const said = (needle: string) => p.logs.filter((l) => l.includes(needle));
    expect(said('job dead-lettered').join('')).toContain('Cannot parse access token: [redacted]');
    expect(said('SDK reported an error').join('')).toContain('secret=[redacted] app_secret=\\"[redacted]\\" verify=[redacted]');
    expect(said('the LLM endpoint refused the request').join('')).toContain('Incorrect API key provided: [redacted]');
  });
});
