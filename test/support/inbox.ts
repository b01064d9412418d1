// The agent inbox over HTTP for the integration and e2e tests: a customer on the widget who had a tool call and a
// confirmed write answered, then asked for a person (the fake model's script), and the inbox API as a signed-in agent.
import { expect } from 'vitest';
import { z } from 'zod';
import { createClient, type ParleyClient } from '../../sdk/src/index.ts';
import type { FakeOpenAi } from './fake-openai.ts';
import { createAgent, PASSWORD, post, sessionOf, type SignedInAgent } from './agents.ts';
import { TEST_SECRET, type TestParley } from './parley.ts';
import type { WidgetClient } from './widget-client.ts';

/** Generous: the test machine is shared and loaded. */
export const DEADLINE_MS = 30_000;

/** The backend: `lookupOrder` (read) and `cancelOrder` (write: the customer confirms it). */
export async function orderBackend(p: TestParley): Promise<ParleyClient> {
  const parley = createClient();
  parley.expose(
    'lookupOrder',
    { description: 'Look an order up', parameters: z.object({ orderId: z.string() }), mode: 'read' },
    async (args: { orderId: string }) => ({
      orderId: args.orderId,
      status: 'shipped',
    }),
  );
  parley.expose(
    'cancelOrder',
    { description: 'Cancel an order', parameters: z.object({ orderId: z.string() }), mode: 'write' },
    async (args: { orderId: string }) => ({
      orderId: args.orderId,
      status: 'cancelled',
    }),
  );
  await parley.listen({ url: p.url(), secret: TEST_SECRET });
  return parley;
}

/** The model's script: a lookup, a reply; a cancellation to confirm, a reply; then a handoff ("a person, please"). */
export function scriptUpToHandoff(llm: FakeOpenAi) {
  llm.script(
    { toolCalls: [{ name: 'lookupOrder', args: { orderId: '1001' } }] },
    { text: 'Order 1001 has shipped.' },
    { toolCalls: [{ name: 'cancelOrder', args: { orderId: '1002' } }] },
    { text: 'Order 1002 is cancelled.' },
    { toolCalls: [{ name: 'handoff', args: { reason: 'the customer asked for a person' } }] },
  );
}

/** Drives the widget customer through the script up to the handoff. */
export async function customerAsksForPerson(w: WidgetClient) {
  w.send({ type: 'message', id: 'm1', text: 'Where is order 1001?' });
  await w.next((f) => f.type === 'message' && f.text === 'Order 1001 has shipped.', DEADLINE_MS);
  w.send({ type: 'message', id: 'm2', text: 'Cancel order 1002 please' });
  const confirm = await w.next((f) => f.type === 'confirm', DEADLINE_MS);
  w.send({ type: 'confirm', id: confirm.id, approve: true });
  await w.next((f) => f.type === 'message' && f.text === 'Order 1002 is cancelled.', DEADLINE_MS);
  w.send({ type: 'message', id: 'm3', text: 'I want to talk to a person' });
  await w.next((f) => f.type === 'status' && f.mode === 'human', DEADLINE_MS);
}

export function inboxApi(p: TestParley, a: SignedInAgent) {
  const call = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { cookie: a.cookie };
    if (method !== 'GET') headers['x-csrf-token'] = a.csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${p.url()}/api/v1/inbox${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    call,
    list: async (view: string, q?: string) => {
      const r = await call('GET', `/conversations?view=${view}${q ? `&q=${encodeURIComponent(q)}` : ''}`);
      expect(r.status).toBe(200);
      return r.body;
    },
    whole: async (id: string) => {
      const r = await call('GET', `/conversations/${encodeURIComponent(id)}`);
      expect(r.status).toBe(200);
      return r.body;
    },
    act: (id: string, action: string, body: unknown = {}) => call('POST', `/conversations/${encodeURIComponent(id)}/${action}`, body),
  };
}

/** Polls `read` until `ok` holds, up to the deadline (the machine is busy). */
export async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, deadlineMs = DEADLINE_MS): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`${what}: not within ${deadlineMs} ms (last: ${JSON.stringify(v).slice(0, 500)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A new account named `name` with a password, signed in. */
export async function namedAgent(p: TestParley, name: string, role: 'agent' | 'admin' = 'agent'): Promise<SignedInAgent> {
  const email = `${name.toLowerCase()}@example.com`;
  const { agentId, token } = await createAgent(p, { email, name, role });
  expect((await post(p, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(200);
  return Object.assign({ agentId }, await sessionOf(p, email));
}
