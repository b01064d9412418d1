// Every resolve kept in the conversation's own history, on a real Parley (both engines): an agent resolves a handoff,
// the customer is handed over again and another agent releases it, then resolves it while the assistant has it. The
// inbox's transcript shows resolved, released, resolved in that order with the right agents (the inbox thread keeps
// only the latest); the public history (`GET /conversations/{id}` through the SDK), the `handoff.released` webhook and
// the SDK's `released` frame say `resolved` for the resolve and not for the release.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type HandoffNotice, type ParleyClient } from '../../sdk/src/index.ts';
import type { SignedInAgent } from '../support/agents.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { DEADLINE_MS, eventually, inboxApi, namedAgent } from '../support/inbox.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const HOOK_SECRET = 'hook-secret-0123456789abcdef';
const conversationId = 'conv_web_cust-resolves';
const open: { close(): unknown }[] = [];
let p: TestParley;
let llm: FakeOpenAi;
let receiver: WebhookReceiver;
let sdk: ParleyClient;
let w: WidgetClient;
let ada: SignedInAgent;
let bob: SignedInAgent;
const frames: HandoffNotice[] = [];

beforeAll(async () => {
  llm = await startFakeOpenAi();
  open.push(llm);
  receiver = await startWebhookReceiver({ secret: HOOK_SECRET });
  open.push(receiver);
  p = await startParley({
    config: {
      llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' },
      webhooks: { allow_private: true, endpoints: [{ url: receiver.url, secret: HOOK_SECRET }] },
    },
  });
  open.push(p);
  sdk = createClient().onHandoff((n) => void frames.push(n));
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  open.push(sdk);
  w = await startWidgetSession(p.url(), { customerId: 'cust-resolves', email: 'cust-resolves@example.com' });
  open.push(w);
  ada = await namedAgent(p, 'Ada');
  bob = await namedAgent(p, 'Bob');
}, 120_000);

afterAll(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const handOver = async () => {
  expect((await sdk.conversations.handoff(conversationId, 'a person, please')).state).toBe('withHuman');
  await w.next((f) => f.type === 'status' && f.mode === 'human', DEADLINE_MS);
};
const releasedFrames = () => frames.filter((f) => f.conversationId === conversationId && f.phase === 'released');
const releasedHooks = () => receiver.delivered().filter((e) => e.type === 'handoff.released' && e.data.conversationId === conversationId);

describe('every resolve in the history', () => {
  it('resolve, hand over again, release, resolve with the assistant: the transcript, the public history, webhooks and frames say which', async () => {
    llm.script({ text: 'Hello! How can I help?' });
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE_MS);

    await handOver();
    expect((await inboxApi(p, ada).act(conversationId, 'claim')).status).toBe(200);
    expect((await inboxApi(p, ada).act(conversationId, 'resolve')).status).toBe(200);
    await w.next((f) => f.type === 'status' && f.mode === 'assistant', DEADLINE_MS);

    await handOver();
    expect((await inboxApi(p, bob).act(conversationId, 'claim')).status).toBe(200);
    expect((await inboxApi(p, bob).act(conversationId, 'release')).status).toBe(200);
    await w.next((f) => f.type === 'status' && f.mode === 'assistant', DEADLINE_MS);
    const again = await inboxApi(p, bob).act(conversationId, 'resolve');
    expect(again.status).toBe(200);
    expect(again.body.thread).toMatchObject({ resolvedBy: { agentId: bob.agentId, name: 'Bob' } });

    // The inbox: each resolve at its time, by whom; the release between them a release.
    const { transcript, item } = await inboxApi(p, ada).whole(conversationId);
    const shown = transcript.filter((e: { kind: string; phase?: string }) => e.kind === 'resolved' || e.phase === 'released');
    expect(shown).toEqual([
      { kind: 'resolved', id: expect.any(String), at: expect.any(Number), by: { agentId: ada.agentId, name: 'Ada' }, released: true },
      { kind: 'handoff', id: expect.any(String), at: expect.any(Number), phase: 'released', by: 'agent' },
      { kind: 'resolved', id: expect.any(String), at: expect.any(Number), by: { agentId: bob.agentId, name: 'Bob' } },
    ]);
    expect(shown[0].at).toBeLessThanOrEqual(shown[1].at);
    expect(shown[1].at).toBeLessThanOrEqual(shown[2].at);
    expect(shown[2].at).toBeLessThanOrEqual(again.body.thread.resolvedAt);
    expect(transcript.map((e: { kind: string; phase?: string }) => (e.kind === 'handoff' ? `handoff:${e.phase}` : e.kind))).toEqual([
      'customer',
      'assistant',
      'handoff:requested',
      'resolved',
      'handoff:requested',
      'handoff:released',
      'resolved',
    ]);
    expect(item).toMatchObject({ resolvedBy: { agentId: bob.agentId, name: 'Bob' } });

    // The public history: the release that was a resolve says so, and by whom; the resolve with no handoff is a record.
    const { messages } = await sdk.conversations.get(conversationId);
    const handoffs = messages.filter((m) => m.role === 'handoff' && m.data?.phase !== 'requested');
    expect(handoffs.map((m) => [m.text, m.data?.resolved, (m.data?.resolvedBy as { name?: string } | undefined)?.name])).toEqual([
      ['released', true, 'Ada'],
      ['released', undefined, undefined],
      ['resolved', true, 'Bob'],
    ]);

    // Live to the SDK, and as webhooks: resolved on Ada's release only (a resolve with no handoff releases nothing).
    await eventually(
      async () => releasedFrames().length,
      (n) => n >= 2,
      'two released frames',
    );
    expect(releasedFrames().map((f) => [f.by, f.resolved])).toEqual([
      ['agent', true],
      ['agent', undefined],
    ]);
    await eventually(
      async () => releasedHooks().length,
      (n) => n >= 2,
      'two handoff.released webhooks',
    );
    expect(releasedHooks().map((e) => [e.data.agentId, e.data.resolved])).toEqual([
      [ada.agentId, true],
      [bob.agentId, undefined],
    ]);
  });
});
