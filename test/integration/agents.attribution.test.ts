// Issue 35 part 1: every agent action is attributed. A message a signed-in agent sends carries the agent's id in
// telemetry and in the outbound webhook (the customer sees only the name); a system's message, with the service
// secret, carries none. On LMDB and PostgreSQL, with a real webhook receiver.
import { afterEach, describe, expect, it } from 'vitest';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { asService, newSignedInAgent, post } from '../support/agents.ts';

const HOOK_SECRET = 'hook-secret-0123456789abcdef';
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function agentEvents(p: TestParley, conversationId: string) {
  await p.services.telemetry.flush();
  const r = await fetch(`${p.url()}/api/v1/telemetry/events?type=message.agent&conversationId=${conversationId}`, {
    headers: { authorization: `Bearer ${TEST_SECRET}` },
  });
  return ((await r.json()) as { items: { data: { author?: unknown } }[] }).items;
}

describe('agent attribution', () => {
  it("a signed-in agent's message carries agentId in telemetry and the webhook, under the account's name; the widget sees only the name; so does its release", async () => {
    const receiver = await startWebhookReceiver({ secret: HOOK_SECRET });
    open.push(receiver);
    const p: TestParley = await startParley({ config: { webhooks: { allow_private: true, endpoints: [{ url: receiver.url, secret: HOOK_SECRET }] } } });
    open.push(p);
    const ada = await newSignedInAgent(p, 'ada@example.com');
    const w = await startWidgetSession(p.url(), { customerId: 'cust-a', email: 'cust-a@example.com' });
    open.push(w);
    w.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
    await w.next((f) => f.type === 'status' && f.mode === 'human');
    const conversationId = 'conv_web_cust-a';

    const sent = await post(
      p,
      `/conversations/${conversationId}/messages`,
      { text: 'Hello from Ada', author: { name: 'Someone Else' } },
      { cookie: ada.cookie, 'x-csrf-token': ada.csrf },
    );
    expect(sent.status).toBe(201);
    const shown = await w.next((f) => f.type === 'message' && f.role === 'agent');
    expect(shown).toMatchObject({ text: 'Hello from Ada', author: { name: 'Ada' } });
    expect(JSON.stringify(shown)).not.toContain(ada.agentId);
    expect((await post(p, `/conversations/${conversationId}/messages`, { text: 'A system note', author: { name: 'Bot ops' } }, asService)).status).toBe(201);

    await expect.poll(() => receiver.delivered().filter((e) => e.type === 'message.agent').length, { timeout: 30_000 }).toBe(2);
    const hooks = receiver.delivered().filter((e) => e.type === 'message.agent');
    expect(hooks.map((e) => e.data.author)).toEqual([{ name: 'Ada', agentId: ada.agentId }, { name: 'Bot ops' }]);
    await expect.poll(async () => (await agentEvents(p, conversationId)).length, { timeout: 30_000 }).toBe(2);
    const authors = (await agentEvents(p, conversationId)).map((e) => e.data.author);
    expect(authors).toContainEqual({ name: 'Ada', agentId: ada.agentId });
    expect(authors).toContainEqual({ name: 'Bot ops' });

    // Released by the agent (with an API key this time): handoff.released says who, in telemetry and the webhook.
    const made = await post(p, '/api/v1/agents/me/keys', { name: 'script' }, { cookie: ada.cookie, 'x-csrf-token': ada.csrf });
    const { key } = (await made.json()) as { key: string };
    expect((await post(p, `/conversations/${conversationId}/release`, {}, { authorization: `Bearer ${key}` })).status).toBe(200);
    await expect
      .poll(() => receiver.delivered().find((e) => e.type === 'handoff.released')?.data, { timeout: 30_000 })
      .toMatchObject({ by: 'agent', agentId: ada.agentId });
    await p.services.telemetry.flush();
    const released = await fetch(`${p.url()}/api/v1/telemetry/events?type=handoff.released&conversationId=${conversationId}`, { headers: asService });
    // `durationMs`: handoff to release (issue 35's time to resolution); the last to write (Bot ops) had no account.
    expect(((await released.json()) as { items: { data: unknown }[] }).items.map((e) => e.data)).toEqual([
      { by: 'agent', agentId: ada.agentId, durationMs: expect.any(Number) },
    ]);
  });
});
