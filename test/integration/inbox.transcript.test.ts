// The agent inbox's transcript on a real Parley (both engines): what the assistant cited from the company's knowledge
// reaches the inbox as the widget got it (the same sources, the same shape), and a resolve reads as a resolve, by whom —
// the release it ended when it ended a handoff, a record of its own when the conversation was with the assistant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignedInAgent } from '../support/agents.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { DEADLINE_MS, inboxApi, namedAgent } from '../support/inbox.ts';
import { corpusArticles } from '../support/knowledge-corpus.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const HELP = 'https://help.example.com/articles/';
const open: { close(): unknown }[] = [];
let p: TestParley;
let llm: FakeOpenAi;
let ada: SignedInAgent;

const service = (method: string, path: string, body: unknown) =>
  fetch(`${p.url()}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  llm = await startFakeOpenAi();
  open.push(llm);
  p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
  open.push(p);
  // One article with its help-centre address, one without (its title is shown as plain text).
  for (const a of corpusArticles().filter((x) => ['returns-policy', 'refund-timing'].includes(x.id))) {
    const r = await service('POST', '/api/v1/knowledge/articles', a.id === 'returns-policy' ? Object.assign({ url: `${HELP}${a.id}` }, a) : a);
    expect(r.status).toBe(201);
  }
  ada = await namedAgent(p, 'Ada');
}, 120_000);

afterAll(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function customer(id: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId: id, email: `${id}@example.com` });
  open.push(w);
  return w;
}

describe("the inbox's transcript", () => {
  it('shows the sources a reply from the knowledge base cited, as the widget got them; a resolve after a handoff reads "resolved by"', async () => {
    // The model searches, then cites every result it was given.
    llm.script({ toolCalls: [{ name: 'search_knowledge', args: { query: 'return an item refund money back days' } }] }, (body) => {
      const tool = [...body.messages].reverse().find((m: { role: string }) => m.role === 'tool');
      const results = JSON.parse(tool.content).results as { n: number }[];
      return { text: `Within 30 days ${results.map((r) => `[${r.n}]`).join(' ')}.` };
    });
    const w = await customer('cust-cited');
    w.send({ type: 'message', id: 'm1', text: 'How long do I have to return something, and when is my money back?' });
    const reply = await w.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE_MS);
    expect(reply.sources?.map((s: { url?: string }) => s.url)).toEqual(expect.arrayContaining([`${HELP}returns-policy`, undefined]));

    const conversationId = 'conv_web_cust-cited';
    const whole = await inboxApi(p, ada).whole(conversationId);
    const said = whole.transcript.find((e: { id: string }) => e.id === reply.id);
    // The stored record's time, not the frame's: the rest as the widget got it.
    expect(said).toEqual({ kind: 'assistant', id: reply.id, at: said.at, text: reply.text, sources: reply.sources });

    expect((await service('POST', `/conversations/${conversationId}/handoff`, { reason: 'refund question' })).status).toBe(200);
    await w.next((f) => f.type === 'status' && f.mode === 'human', DEADLINE_MS);
    expect((await inboxApi(p, ada).act(conversationId, 'claim')).status).toBe(200);
    const resolved = await inboxApi(p, ada).act(conversationId, 'resolve');
    expect(resolved.status).toBe(200);
    await w.next((f) => f.type === 'status' && f.mode === 'assistant', DEADLINE_MS);
    const after = (await inboxApi(p, ada).whole(conversationId)).transcript;
    expect(after.map((e: { kind: string }) => e.kind)).toEqual(['customer', 'tool', 'assistant', 'handoff', 'resolved']);
    expect(after[3]).toMatchObject({ kind: 'handoff', phase: 'requested', reason: 'refund question' });
    expect(after[4]).toMatchObject({ kind: 'resolved', by: { agentId: ada.agentId, name: 'Ada' }, released: true });
    expect(after[4].at).toBeGreaterThanOrEqual(after[3].at);
    expect(after[4].at).toBeLessThanOrEqual(resolved.body.thread.resolvedAt);
  });

  it('a conversation resolved while with the assistant (no handoff) shows the resolve, at its time, after what came before', async () => {
    llm.script({ text: 'Hello! How can I help?' });
    const w = await customer('cust-plain');
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE_MS);
    const conversationId = 'conv_web_cust-plain';
    const resolved = await inboxApi(p, ada).act(conversationId, 'resolve');
    expect(resolved.status).toBe(200);
    const { transcript } = await inboxApi(p, ada).whole(conversationId);
    expect(transcript.map((e: { kind: string }) => e.kind)).toEqual(['customer', 'assistant', 'resolved']);
    // A record of the conversation's own history (written before the inbox's thread says resolved).
    expect(transcript[2]).toEqual({
      kind: 'resolved',
      id: expect.stringMatching(/^v:\d+$/),
      at: expect.any(Number),
      by: { agentId: ada.agentId, name: 'Ada' },
    });
    expect(transcript[2].at).toBeGreaterThanOrEqual(transcript[1].at);
    expect(transcript[2].at).toBeLessThanOrEqual(resolved.body.thread.resolvedAt);
  });
});
