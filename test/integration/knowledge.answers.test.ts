// Issue 36, part 3: answers with sources, black-box on both engines. The fixture corpus is imported through the API;
// a real `openai` client talks to a local OpenAI-compatible fake that calls `search_knowledge` and cites [1] and a
// made-up [7]; the widget protocol client reads the frames over a real socket. Only the real source reaches the
// message (and the history, the agent API, a reload); an unanswerable question gets "I don't know" and a person
// offered; a deleted article is cited no more; a citation of an earlier turn's result is dropped; a restarted server
// offers the tool and answers at once; WhatsApp gets a plain Sources line; the offline model cites too.
import { afterEach, describe, expect, it } from 'vitest';
import { corpusArticles } from '../support/knowledge-corpus.ts';
import { startFakeGraph } from '../support/fake-graph.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { connectWidget, startWidgetSession, type WidgetClient } from '../support/widget-client.ts';
import { postWebhook, textMessage, until, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const auth = { authorization: `Bearer ${TEST_SECRET}` };
const HELP = 'https://help.example.com/articles/';
const HOOK_SECRET = 'whsec-knowledge-0123456789';

async function api(p: TestParley, method: string, path: string, body?: unknown) {
  const res = await fetch(`${p.url()}${path}`, {
    method,
    headers: body === undefined ? auth : Object.assign({ 'content-type': 'application/json' }, auth),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined };
}

/** The corpus through the API, each article with its help-centre URL. */
async function importCorpus(p: TestParley) {
  for (const a of corpusArticles()) {
    const r = await api(p, 'POST', '/api/v1/knowledge/articles', Object.assign({ url: `${HELP}${a.id}` }, a));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
}

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

/** Sends a message and waits for the assistant's reply to it. */
async function ask(w: WidgetClient, id: string, text: string) {
  w.send({ type: 'message', id, text });
  await w.next((f) => f.type === 'ack' && f.id === id, 30_000);
  return w.next((f) => f.type === 'message' && f.role === 'assistant', 60_000);
}

const lastToolContent = (body: any) => [...body.messages].reverse().find((m: any) => m.role === 'tool')?.content as string | undefined;
const resultsIn = (body: any) =>
  (JSON.parse(lastToolContent(body) ?? '{"results":[]}') as { results: { n: number; title: string; url?: string; chunk: string }[] }).results;

/**
 * The model of the judging scenario: it searches with `query`, then answers citing [1] and a made-up [7] (a search
 * returns at most five results). `searchFirst: false`: it answers at once, citing [1] without searching.
 */
function citingModel(llm: FakeOpenAi, query: string, o: { searchFirst?: boolean } = {}) {
  if (o.searchFirst === false) return llm.script({ text: 'As I said before, returns are free [1].' });
  llm.script({ toolCalls: [{ name: 'search_knowledge', args: { query } }] }, (body) => ({
    text: `Here is what I found [1]. You also get a free gift [7]. ${resultsIn(body).length} results.`,
  }));
}

async function openaiParley(llm: FakeOpenAi, storagePath?: string, extra: Parameters<typeof startParley>[0] = {}) {
  const llmConfig = { provider: 'openai' as const, base_url: llm.url, model: 'fake-1', api_key: 'k' };
  const p = await startParley({ storagePath, config: Object.assign({ llm: llmConfig }, extra.config) });
  open.push(p);
  return p;
}

describe('answers from the knowledge base, with their sources', () => {
  it('keeps the one real citation of this turn, drops the invented one, and keeps it in the history; nothing found: "I don\'t know" and a person', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    const p = await openaiParley(llm);
    const w0 = await widget(p, 'before-import');
    llm.script({ text: 'Hello!' });
    await ask(w0, 'm0', 'hello');
    // An empty knowledge base: the tool is not offered.
    expect(llm.requests[0].tools?.map((t: any) => t.function.name) ?? []).not.toContain('search_knowledge');

    await importCorpus(p);
    const w = await widget(p, 'cust-k1');
    citingModel(llm, 'return an item how many days');
    const reply = await ask(w, 'm1', 'How many days do I have to send something back?');
    const first = llm.requests.at(-2);
    expect(first.tools.map((t: any) => t.function.name)).toContain('search_knowledge');
    expect(first.messages.map((m: any) => m.content).join('\n')).toMatch(/search_knowledge first/);
    const results = resultsIn(llm.requests.at(-1));
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThan(7);
    expect(results[0].chunk).toMatch(/^returns-policy#/);

    expect(reply.text).toBe(`Here is what I found [1]. You also get a free gift. ${results.length} results.`);
    expect(reply.sources).toEqual([{ n: 1, title: results[0].title, url: `${HELP}returns-policy` }]);

    // The history keeps them: a reload (a new `ready`) and the agent API.
    const again = await widget(p, 'cust-k1');
    const ready = again.frames.find((f) => f.type === 'ready')!;
    expect(ready.history.find((e: any) => e.id === reply.id)).toMatchObject({ role: 'assistant', text: reply.text, sources: reply.sources });
    const read = await api(p, 'GET', '/conversations/conv_web_cust-k1');
    expect(read.body.messages.find((m: any) => m.id === reply.id)).toMatchObject({ sources: reply.sources });

    // [1] of the last turn is not this turn's: a reply that cites it without searching carries no source.
    citingModel(llm, '', { searchFirst: false });
    const stale = await ask(w, 'm2', 'And returns are free?');
    expect(stale.text).toBe('As I said before, returns are free.');
    expect(stale.sources).toBeUndefined();

    // Nothing relevant: whatever the model writes, the customer gets "I don't know" and the offer of a person.
    llm.script({ toolCalls: [{ name: 'search_knowledge', args: { query: 'capital of France' } }] }, { text: 'It is Paris [1].' });
    const unknown = await ask(w, 'm3', 'What is the capital of France?');
    expect(resultsIn(llm.requests.at(-1))).toEqual([]);
    expect(JSON.parse(lastToolContent(llm.requests.at(-1))!).instructions).toMatch(/say you do not know/);
    expect(unknown.text).toMatch(/I don't know/);
    expect(unknown.text).toMatch(/connect you with a person/);
    expect(unknown.sources).toBeUndefined();
    // It is marked as no answer ("Did that answer…?" is not asked), live and in the history; a real answer is not.
    expect(unknown.unanswered).toBe(true);
    expect(reply.unanswered).toBeUndefined();
    const history = (await widget(p, 'cust-k1')).frames.find((f) => f.type === 'ready')!.history;
    expect(history.find((e: any) => e.id === unknown.id)).toMatchObject({ role: 'assistant', unanswered: true });
    expect(history.find((e: any) => e.id === reply.id).unanswered).toBeUndefined();
    llm.script({ toolCalls: [{ name: 'handoff', args: { reason: 'the customer accepted a person' } }] });
    w.send({ type: 'message', id: 'm4', text: 'Yes please' });
    expect(await w.next((f) => f.type === 'status', 60_000)).toMatchObject({ mode: 'human' });

    // Telemetry: each search, its hits with their scores, whether they were cited; the query only as a hash here.
    const events = await api(p, 'GET', '/api/v1/telemetry/events?type=knowledge.search&limit=100');
    const searches = events.body.items as { data: any }[];
    expect(searches.map((e) => e.data.found)).toEqual([true, false]);
    expect(searches[0].data.query).toBeUndefined();
    expect(searches[0].data.queryHash).toMatch(/^[0-9a-f]{16}$/);
    expect(searches[0].data.hits[0]).toMatchObject({ chunkId: results[0].chunk, articleId: 'returns-policy', cited: true });
    expect(searches[0].data.hits[0].score).toBeGreaterThan(0);
    expect(searches[0].data.hits.slice(1).every((h: any) => h.cited === false)).toBe(true);

    // The dashboard's card: the question that found nothing (its hash: store_text is off), the article cited.
    const insights = await api(p, 'GET', '/api/v1/telemetry/knowledge');
    expect(insights.status).toBe(200);
    expect(insights.body).toMatchObject({ searches: 2, unanswered: 1, cited: 1, truncated: false });
    expect(insights.body.gaps).toEqual([{ queryHash: searches[1].data.queryHash, count: 1, lastAt: expect.any(Number) }]);
    expect(insights.body.articles[0]).toEqual({ articleId: 'returns-policy', title: results[0].title, cited: 1, retrieved: 1 });
    expect((await api(p, 'GET', '/api/v1/telemetry/knowledge?limit=0')).body.error.code).toBe('validation_failed');
    expect((await fetch(`${p.url()}/api/v1/telemetry/knowledge`)).status).toBe(401);
  });

  it('a deleted article is cited no more; a restarted server offers the tool and answers with sources at once', async () => {
    const llm = await startFakeOpenAi();
    open.push(llm);
    const receiver = await startWebhookReceiver({ secret: HOOK_SECRET });
    open.push(receiver);
    const p = await openaiParley(llm, undefined, { config: { webhooks: { allow_private: true, endpoints: [{ url: receiver.url, secret: HOOK_SECRET }] } } });
    await importCorpus(p);
    const w = await widget(p, 'cust-k2');
    citingModel(llm, 'forgot password reset');
    const before = await ask(w, 'm1', 'I forgot my password');
    expect(before.sources).toEqual([{ n: 1, title: 'Resetting your password', url: `${HELP}reset-password` }]);
    // The integrator's webhook gets them too.
    const [hook] = await until(
      () => receiver.delivered().filter((e) => e.type === 'message.assistant'),
      (d) => d.length >= 1,
      60_000,
    );
    expect(hook.data).toMatchObject({ messageId: before.id, text: before.text, sources: before.sources });

    expect((await api(p, 'DELETE', '/api/v1/knowledge/articles/reset-password')).status).toBe(204);
    citingModel(llm, 'forgot password reset');
    const after = await ask(w, 'm2', 'I forgot my password again');
    expect(resultsIn(llm.requests.at(-1)).map((r) => r.chunk)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^reset-password#/)]));
    expect((after.sources ?? []).map((s: any) => s.title)).not.toContain('Resetting your password');

    const storagePath = p.storagePath;
    await p.close();
    open.splice(open.indexOf(p), 1);
    const restarted = await openaiParley(llm, storagePath);
    const w2 = await widget(restarted, 'cust-k3');
    citingModel(llm, 'track my order parcel');
    const asked = llm.requests.length;
    const tracked = await ask(w2, 'm1', 'Where is my parcel?');
    expect(llm.requests[asked].tools.map((t: any) => t.function.name)).toContain('search_knowledge');
    expect(tracked.sources).toHaveLength(1);
    expect(tracked.sources[0].url).toMatch(new RegExp(`^${HELP}`));
  });

  it('WhatsApp gets the reply and a plain "Sources: 1. Title – url" line', async () => {
    const graph = await startFakeGraph();
    open.push(graph);
    const llm = await startFakeOpenAi();
    open.push(llm);
    const p = await openaiParley(llm, undefined, {
      config: { channels: { whatsapp: Object.assign({ enabled: true, provider: 'meta' as const, graph_url: graph.url }, WA) } },
    });
    await importCorpus(p);
    citingModel(llm, 'return an item how many days');
    await postWebhook(p.url(), webhookBody([textMessage('+15550007777', 'How many days do I have to send something back?')]));
    const [sent] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
      60_000,
    );
    const title = resultsIn(llm.requests.at(-1))[0].title;
    expect(sent.body.text.body).toMatch(/^Here is what I found \[1\]\. You also get a free gift\. \d results\.\n\nSources: 1\. /);
    expect(sent.body.text.body.endsWith(`\n\nSources: 1. ${title} – ${HELP}returns-policy`)).toBe(true);
  });

  it('the offline model answers from the knowledge base and cites it, to a visitor too', async () => {
    const p = await startParley({ config: { identity: { jwt_secret: 'identity-secret-0123456789abcdef', visitors: true } } });
    open.push(p);
    await importCorpus(p);
    const w = await widget(p, 'cust-k4');
    const reply = await ask(w, 'm1', 'How do I reset my password?');
    expect(reply.text).toMatch(/ \[1\]$/);
    expect(reply.sources).toEqual([{ n: 1, title: 'Resetting your password', url: `${HELP}reset-password` }]);
    const unknown = await ask(w, 'm2', 'Can you write me a poem about cats?');
    expect(unknown.text).toMatch(/I don't know/);
    w.send({ type: 'message', id: 'm3', text: 'yes please' });
    expect(await w.next((f) => f.type === 'status', 60_000)).toMatchObject({ mode: 'human' });

    // A visitor (no sign-in) is offered the knowledge base: it reads nothing of theirs.
    const v = await connectWidget(p.url());
    open.push(v);
    v.send({ type: 'init' });
    expect((await v.next((f) => f.type === 'ready', 30_000)).customerId).toMatch(/^vis_/);
    const answered = await ask(v, 'v1', 'How long does a refund take to reach my card?');
    expect(answered.sources?.[0]).toMatchObject({ n: 1, title: expect.any(String), url: expect.stringMatching(new RegExp(`^${HELP}`)) });
  });

  it('the demo ships help articles: seeded at start (once: a restart leaves them alone), and the offline model answers from them', async () => {
    const p = await startParley({ config: { demo: { knowledge: true } } });
    open.push(p);
    const listed = await api(p, 'GET', '/api/v1/knowledge/articles?limit=50');
    const ids = (listed.body.items as { id: string; updatedAt: number }[]).map((a) => a.id).sort();
    expect(ids).toEqual(['contact', 'reset-password', 'returns', 'shipping']);
    const w = await widget(p, 'demo-visitor');
    const reply = await ask(w, 'm1', 'How do I return an item?');
    expect(reply.text).toMatch(/within 30 days.* \[1\]$/);
    expect(reply.sources).toEqual([{ n: 1, title: 'Returns and refunds' }]);

    const storagePath = p.storagePath;
    await p.close();
    open.splice(open.indexOf(p), 1);
    const again = await startParley({ storagePath, config: { demo: { knowledge: true } } });
    open.push(again);
    const relisted = await api(again, 'GET', '/api/v1/knowledge/articles?limit=50');
    expect(relisted.body.items).toEqual(listed.body.items);
  });
});
