// Issue 35, parts 2–3: the agent inbox API on a real Parley (both engines), two signed-in agents, a widget customer
// whose assistant called a tool and had a write confirmed before the customer asked for a person. The claim race
// (one 409 naming the holder), the conversation whole (the tool call with its arguments and result, the confirmation
// and its outcome, the handoff), notes that never reach the customer, typing and the agent's name on the widget,
// assign, search, resolve (the transcript says who resolved it); and refusals without a session or CSRF token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignedInAgent } from '../support/agents.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { customerAsksForPerson, DEADLINE_MS, inboxApi, namedAgent, orderBackend, scriptUpToHandoff } from '../support/inbox.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const conversationId = 'conv_web_cust-inbox';
const open: { close(): unknown }[] = [];
let p: TestParley;
let llm: FakeOpenAi;
let w: WidgetClient;
let ada: SignedInAgent;
let bob: SignedInAgent;

beforeAll(async () => {
  llm = await startFakeOpenAi();
  open.push(llm);
  p = await startParley({ config: { llm: { provider: 'openai', base_url: llm.url, model: 'fake-1' } } });
  open.push(p);
  open.push(await orderBackend(p));
  scriptUpToHandoff(llm);
  w = await startWidgetSession(p.url(), { customerId: 'cust-inbox', email: 'cust-inbox@example.com' });
  open.push(w);
  await customerAsksForPerson(w);
  ada = await namedAgent(p, 'Ada');
  bob = await namedAgent(p, 'Bob');
}, 120_000);

afterAll(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('the agent inbox API', () => {
  it('refuses a request without a session (401), a change without the CSRF token (403) and the service secret', async () => {
    expect((await fetch(`${p.url()}/api/v1/inbox/conversations`)).status).toBe(401);
    const noCsrf = await fetch(`${p.url()}/api/v1/inbox/conversations/${conversationId}/claim`, { method: 'POST', headers: { cookie: ada.cookie } });
    expect(noCsrf.status).toBe(403);
    expect(((await noCsrf.json()) as { error: { code: string } }).error.code).toBe('csrf_failed');
    const service = await fetch(`${p.url()}/api/v1/inbox/conversations`, { headers: { authorization: 'Bearer test-secret' } });
    expect(service.status).toBe(401);
    const bad = await inboxApi(p, ada).call('GET', '/conversations?view=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
  });

  it('both agents see it waiting; of two claims at once exactly one wins and the other is told who has it', async () => {
    for (const a of [ada, bob]) {
      const waiting = await inboxApi(p, a).list('waiting');
      expect(waiting.items.map((i: { conversationId: string }) => i.conversationId)).toEqual([conversationId]);
      expect(waiting.items[0]).toMatchObject({
        customer: { email: 'cust-inbox@example.com' },
        handoff: { reason: 'the customer asked for a person' },
        unread: 3,
      });
      expect(waiting.counts).toMatchObject({ waiting: 1, open: 1, mine: 0 });
    }
    const [a, b] = await Promise.all([inboxApi(p, ada).act(conversationId, 'claim'), inboxApi(p, bob).act(conversationId, 'claim')]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    expect(loser.body.error.code).toBe('claimed_by_other');
    expect(loser.body.error.message).toMatch(/has this conversation/);
    // Make Ada the holder for the rest of the file, whoever won the race.
    if (a.status !== 200) expect((await inboxApi(p, bob).act(conversationId, 'assign', { agentId: ada.agentId })).status).toBe(200);
    const refused = await inboxApi(p, bob).act(conversationId, 'claim');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'claimed_by_other', message: 'Ada has this conversation', holder: { agentId: ada.agentId, name: 'Ada' } });
    expect((await inboxApi(p, ada).list('mine')).items.map((i: { conversationId: string }) => i.conversationId)).toEqual([conversationId]);
    expect((await inboxApi(p, bob).list('waiting')).items).toEqual([]);
  });

  it('the conversation whole: the tool call with arguments and result, the confirmation and its outcome, the handoff, in order', async () => {
    const whole = await inboxApi(p, ada).whole(conversationId);
    const kinds = whole.transcript.map((e: { kind: string }) => e.kind);
    expect(kinds).toEqual(['customer', 'tool', 'assistant', 'customer', 'confirmation', 'confirmation', 'tool', 'assistant', 'customer', 'handoff']);
    expect(whole.transcript[1]).toMatchObject({ kind: 'tool', name: 'lookupOrder', args: { orderId: '1001' }, ok: true });
    expect(JSON.stringify(whole.transcript[1].result)).toContain('shipped');
    expect(whole.transcript[4]).toMatchObject({ kind: 'confirmation', name: 'cancelOrder', outcome: 'requested' });
    // What the approved action came to is on the answer (the confirmation's receipt), not an entry of its own.
    expect(whole.transcript[5]).toMatchObject({ kind: 'confirmation', outcome: 'approved', receipt: { ok: true } });
    expect(whole.transcript[6]).toMatchObject({ kind: 'tool', name: 'cancelOrder', args: { orderId: '1002' }, ok: true });
    expect(whole.transcript[9]).toMatchObject({ kind: 'handoff', phase: 'requested', reason: 'the customer asked for a person' });
    expect(whole.customer).toMatchObject({ externalId: 'anon:cust-inbox', verified: false, email: 'cust-inbox@example.com', channels: ['web'] });
    expect(whole.item.holder).toEqual({ agentId: ada.agentId, name: 'Ada' });
  });

  it('a note is seen by agents only: never on the widget, never in the conversation history the model reads', async () => {
    const secretNote = 'internal: customer is a VIP, refund without asking';
    const r = await inboxApi(p, ada).act(conversationId, 'notes', { text: secretNote });
    expect(r.status).toBe(201);
    const whole = await inboxApi(p, bob).whole(conversationId);
    expect(whole.transcript.at(-1)).toMatchObject({ kind: 'note', text: secretNote, author: { name: 'Ada' } });
    // An agent reply afterwards reaches the widget: everything before it was pushed already.
    const sent = await inboxApi(p, ada).act(conversationId, 'messages', { text: 'Hello, Ada here.' });
    expect(sent.status).toBe(201);
    await w.next((f) => f.type === 'message' && f.role === 'agent', DEADLINE_MS);
    expect(JSON.stringify(w.frames)).not.toContain('VIP');
    const history = await historyOf(p.services.store, conversationId);
    expect(JSON.stringify(history)).not.toContain('VIP');
  });

  it("typing and replies reach the widget with the agent's name; the holder's rival is refused", async () => {
    expect((await inboxApi(p, ada).act(conversationId, 'typing', { on: true })).body).toEqual({ shown: true });
    expect(await w.next((f) => f.type === 'agent_typing' && f.on, DEADLINE_MS)).toEqual({ type: 'agent_typing', on: true, agent: { name: 'Ada' } });
    const sent = await inboxApi(p, ada).act(conversationId, 'messages', { text: 'Your refund is on its way.' });
    expect(sent.status).toBe(201);
    expect(await w.next((f) => f.type === 'message' && f.text === 'Your refund is on its way.', DEADLINE_MS)).toMatchObject({
      role: 'agent',
      author: { name: 'Ada' },
    });
    const rival = await inboxApi(p, bob).act(conversationId, 'messages', { text: 'Bob here' });
    expect(rival.status).toBe(409);
    expect(rival.body.error.message).toBe('Ada has this conversation');
  });

  it('unread counts follow the customer; search by email and by externalId finds the conversation (text search is off)', async () => {
    w.send({ type: 'message', id: 'm4', text: 'Thanks! One more question' });
    await w.next((f) => f.type === 'ack' && f.id === 'm4', DEADLINE_MS);
    const mine = await inboxApi(p, ada).list('mine');
    expect(mine.items[0].unread).toBe(1);
    expect(mine.unreadMine).toBe(1);
    expect((await inboxApi(p, ada).act(conversationId, 'read')).status).toBe(204);
    expect((await inboxApi(p, ada).list('mine')).unreadMine).toBe(0);
    for (const q of ['cust-inbox@example.com', 'CUST-INBOX', 'anon:cust-inbox']) {
      expect((await inboxApi(p, bob).list('open', q)).items.map((i: { conversationId: string }) => i.conversationId)).toEqual([conversationId]);
    }
    const words = await inboxApi(p, bob).list('open', 'refund');
    expect(words.textSearch).toBe(false);
    expect(words.items).toEqual([]);
  });

  it('assign to another agent moves it to their Mine; resolve hands it back to the assistant and lists it as resolved', async () => {
    expect((await inboxApi(p, ada).act(conversationId, 'assign', { agentId: bob.agentId })).status).toBe(200);
    expect((await inboxApi(p, bob).list('mine')).items.map((i: { conversationId: string }) => i.conversationId)).toEqual([conversationId]);
    expect((await inboxApi(p, ada).list('mine')).items).toEqual([]);
    expect((await inboxApi(p, ada).act(conversationId, 'assign', { agentId: 'ag_nobody' })).status).toBe(404);
    const resolved = await inboxApi(p, bob).act(conversationId, 'resolve');
    expect(resolved.status).toBe(200);
    expect(resolved.body.thread).toMatchObject({ resolvedBy: { agentId: bob.agentId, name: 'Bob' } });
    await w.next((f) => f.type === 'status' && f.mode === 'assistant', DEADLINE_MS);
    const list = await inboxApi(p, ada).list('resolved');
    expect(list.items.map((i: { conversationId: string }) => i.conversationId)).toEqual([conversationId]);
    expect(list.items[0].resolvedBy).toEqual({ agentId: bob.agentId, name: 'Bob' });
    // The transcript says who resolved it (not "released"), where it went back to the assistant.
    const { transcript } = await inboxApi(p, ada).whole(conversationId);
    expect(transcript.filter((e: { kind: string; phase?: string }) => e.kind === 'resolved' || e.phase === 'released')).toEqual([
      expect.objectContaining({ kind: 'resolved', by: { agentId: bob.agentId, name: 'Bob' }, released: true }),
    ]);
    expect(list.counts).toEqual({ waiting: 0, mine: 0, open: 0 });
  });

  it('saved replies are team-wide, by shortcut, a taken shortcut refused', async () => {
    const made = await inboxApi(p, ada).call('POST', '/saved-replies', { shortcut: 'Refund', text: 'Your refund is on its way.' });
    expect(made.status).toBe(201);
    expect(made.body.shortcut).toBe('refund');
    expect((await inboxApi(p, bob).call('POST', '/saved-replies', { shortcut: 'refund', text: 'other' })).status).toBe(409);
    expect((await inboxApi(p, bob).call('GET', '/saved-replies')).body.items.map((r: { shortcut: string }) => r.shortcut)).toEqual(['refund']);
    expect((await inboxApi(p, bob).call('POST', '/saved-replies', { shortcut: 'no spaces', text: 'x' })).status).toBe(400);
  });

  it('with telemetry.store_text on, search also finds the words of a conversation', async () => {
    const q = await startParley({ config: { telemetry: { store_text: true } } });
    open.push(q);
    const c = await startWidgetSession(q.url(), { customerId: 'cust-words', email: 'words@example.com' });
    open.push(c);
    c.send({ type: 'message', id: 'm1', text: 'My parcel arrived DAMAGED yesterday' });
    await c.next((f) => f.type === 'message' && f.role === 'assistant', DEADLINE_MS);
    const carol = await namedAgent(q, 'Carol');
    const found = await inboxApi(q, carol).list('open', 'damaged');
    expect(found.textSearch).toBe(true);
    expect(found.items.map((i: { conversationId: string }) => i.conversationId)).toEqual(['conv_web_cust-words']);
    expect((await inboxApi(q, carol).list('open', 'nothing like this')).items).toEqual([]);
  });
});
