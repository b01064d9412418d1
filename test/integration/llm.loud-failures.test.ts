// Issue 15 part 6: an LLM endpoint that answers 401/403/404 is a misconfiguration, and it is loud:
// one error line per distinct cause with the provider's own message (not one per turn), every
// failure counted in parley_errors_total, and /ready `degraded` (still 200) with `checks.llm` naming
// the last failure until the endpoint answers again. The real openai client against fake-openai.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { parsePrometheusText, sampleValue } from '../support/prom-text.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const API_KEY = 'sk-test-loud-failures-0123456789abcdef';
const WRONG_KEY = `Incorrect API key provided: ${API_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`;
const NO_MODEL = 'The model `gpt-nope` does not exist or you do not have access to it.';

async function setup(o: { fallback?: boolean } = {}) {
  const llm = await startFakeOpenAi();
  open.push(llm);
  const p = await startParley({
    config: {
      llm: {
        provider: 'openai',
        base_url: llm.url,
        api_key: API_KEY,
        model: 'gpt-nope',
        max_retries: 1,
        ...(o.fallback === false ? {} : { fallback: { provider: 'offline' } }),
      },
      logging: { level: 'info' },
    },
  });
  open.push(p);
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', customerId: 'loud', email: 'loud@example.com' });
  await w.next((f) => f.type === 'ready');
  return { llm, p, w };
}

let n = 0;
async function turn(w: WidgetClient) {
  const id = `m${++n}`;
  w.send({ type: 'message', id, text: 'hello' });
  return w.next((f) => f.type === 'message');
}

const refusedLines = (p: TestParley) => p.logs.map((l) => JSON.parse(l)).filter((l) => String(l.msg).startsWith('the LLM endpoint refused the request'));
const ready = async (p: TestParley) => {
  const res = await fetch(`${p.url()}/ready`);
  return { status: res.status, body: await res.json() };
};
const errorsTotal = async (p: TestParley) =>
  sampleValue(
    parsePrometheusText(await (await fetch(`${p.url()}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).text()),
    'parley_errors_total',
  );

describe('loud LLM failures', () => {
  it('401 on every turn: one error line with the provider message (key scrubbed), every failure counted, /ready degraded with checks.llm', async () => {
    const { llm, p, w } = await setup();
    llm.fallback({ status: 401, errorMessage: WRONG_KEY });
    expect((await ready(p)).body).toMatchObject({ status: 'ready', checks: { llm: 'ok' } });
    for (let i = 0; i < 5; i++) expect((await turn(w)).text).toBeTruthy(); // the offline fallback answers
    expect(llm.requests).toHaveLength(5); // a 401 is not retried

    const lines = refusedLines(p);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, provider: 'openai', model: 'gpt-nope', status: 401 });
    expect(lines[0].providerMessage).toContain('Incorrect API key provided: [redacted]. You can find your API key');
    expect(p.logs.join('')).not.toContain(API_KEY);

    await p.services.telemetry.flush();
    expect(await errorsTotal(p)).toBe(5);
    const r = await ready(p);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('degraded');
    expect(r.body.checks.llm).toMatch(/^failing: openai \(gpt-nope\) answered HTTP 401, 5 times, last at \d{4}-.*Incorrect API key provided: \[redacted\]/);
    expect(JSON.stringify(r.body)).not.toContain(API_KEY);
    const events = await (await fetch(`${p.url()}/api/v1/telemetry/events?type=error`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).json();
    expect(events.items).toHaveLength(5);
    expect(events.items[0].data).toMatchObject({ where: 'llm', provider: 'openai', status: 401 });
    expect(JSON.stringify(events)).not.toContain(API_KEY);
    // The failed calls' own records carry the provider's message too, without the key.
    const calls = await (await fetch(`${p.url()}/api/v1/telemetry/turn-calls`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).json();
    expect(calls.items.filter((c: { ok: boolean }) => !c.ok).map((c: { error: string }) => c.error)).toEqual(
      Array(5).fill(`The model endpoint answered HTTP 401: ${WRONG_KEY.replace(API_KEY, '[redacted]')}`),
    );
  });

  it('a new cause is logged once more; after the endpoint answers, ready again, and the same cause is logged again if it returns', async () => {
    const { llm, p, w } = await setup({ fallback: false });
    llm.fallback({ status: 401, errorMessage: WRONG_KEY });
    await turn(w);
    await turn(w);
    llm.fallback({ status: 404, errorMessage: NO_MODEL });
    expect((await turn(w)).text).toMatch(/sorry/i); // no fallback: an apology
    await turn(w);
    llm.fallback({ status: 403, errorMessage: 'Project does not have access to model gpt-nope' });
    await turn(w);
    expect(refusedLines(p).map((l) => l.status)).toEqual([401, 404, 403]);
    expect(refusedLines(p)[1].providerMessage).toContain(NO_MODEL);
    expect((await ready(p)).body).toMatchObject({
      status: 'degraded',
      checks: { llm: expect.stringMatching(/HTTP 403, 5 times.*Project does not have access/) },
    });

    llm.fallback({ text: 'Back again.' });
    expect((await turn(w)).text).toBe('Back again.');
    expect(await ready(p)).toMatchObject({ status: 200, body: { status: 'ready', checks: { llm: 'ok' } } });
    expect(p.logs.some((l) => l.includes('the LLM endpoint answers again'))).toBe(true);

    llm.fallback({ status: 401, errorMessage: WRONG_KEY });
    await turn(w);
    await turn(w);
    expect(refusedLines(p).map((l) => l.status)).toEqual([401, 404, 403, 401]);
    expect((await ready(p)).body.checks.llm).toMatch(/HTTP 401, 2 times/);
    await p.services.telemetry.flush();
    expect(await errorsTotal(p)).toBe(7);
  });

  it('500s and timeouts stay quiet: retried and counted as failed calls, not a misconfiguration', async () => {
    const { llm, p, w } = await setup();
    llm.fallback({ status: 500 });
    await turn(w);
    expect(llm.requests).toHaveLength(2);
    expect(refusedLines(p)).toHaveLength(0);
    expect((await ready(p)).body).toMatchObject({ status: 'ready', checks: { llm: 'ok' } });
  });
});
