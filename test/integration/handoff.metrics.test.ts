// Issue 35, part 6: handoffs measured in /metrics, per agent and overall, with exact values for a known sequence
// (the injected clock is frozen and moved by the test); a handoff a signed-in agent asks for through the API is
// attributed to them. Real server and store (LMDB; PostgreSQL with the postgres project), real widget sockets.
import { afterEach, describe, expect, it } from 'vitest';
import { frozenClock } from '../support/frozen-clock.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';
import { asService, newSignedInAgent, post, type SignedInAgent } from '../support/agents.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const MIN = 60_000;

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

const as = (a: SignedInAgent) => ({ cookie: a.cookie, 'x-csrf-token': a.csrf });

/** The sample lines of /metrics whose name starts with `prefix`, as `name{labels}` → value. */
async function samples(p: TestParley, prefix: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${p.url()}/metrics`, { headers: asService })).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const at = line.lastIndexOf(' ');
    out[line.slice(0, at)] = Number(line.slice(at + 1));
  }
  return out;
}

describe('handoffs in /metrics', () => {
  it('first reply and resolution times per agent, handoffs waiting and open; an agent asking for a handoff is attributed', async () => {
    const clock = frozenClock(Date.UTC(2026, 2, 25, 9, 0));
    const p = await startParley({ clock });
    open.push(p);
    const ada = await newSignedInAgent(p, 'ada@example.com');
    const bea = await newSignedInAgent(p, 'bea@example.com');

    // Customer A asks for a person; Ada answers 2 minutes later.
    const a = await widget(p, 'cust-a');
    a.send({ type: 'message', id: 'a1', text: 'I want to talk to a person' });
    await a.next((f) => f.type === 'status' && f.mode === 'human');
    // Customer B talks to the assistant; Bea hands the conversation to the team herself.
    const b = await widget(p, 'cust-b');
    b.send({ type: 'message', id: 'b1', text: 'hello' });
    await b.next((f) => f.type === 'message' && f.role === 'assistant');
    expect((await post(p, '/conversations/conv_web_cust-b/handoff', { reason: 'vip' }, as(bea))).status).toBe(200);
    await b.next((f) => f.type === 'status' && f.mode === 'human');
    expect(await samples(p, 'parley_handoffs_waiting')).toEqual({ parley_handoffs_waiting: 2 });

    clock.move(2 * MIN);
    expect((await post(p, '/conversations/conv_web_cust-a/messages', { text: 'Ada here', author: { name: 'Ada' } }, as(ada))).status).toBe(201);
    await a.next((f) => f.type === 'message' && f.role === 'agent');
    expect(await samples(p, 'parley_handoffs_waiting')).toEqual({ parley_handoffs_waiting: 1 });
    expect(await samples(p, 'parley_handoffs_open')).toEqual({ [`parley_handoffs_open{agent="${ada.agentId}"}`]: 1 });

    clock.move(3 * MIN);
    expect((await post(p, '/conversations/conv_web_cust-b/messages', { text: 'Bea here', author: { name: 'Bea' } }, as(bea))).status).toBe(201);
    await b.next((f) => f.type === 'message' && f.role === 'agent');
    clock.move(5 * MIN);
    expect((await post(p, '/conversations/conv_web_cust-a/release', {}, as(ada))).status).toBe(200);
    await a.next((f) => f.type === 'status' && f.mode === 'assistant');

    const first = await samples(p, 'parley_handoff_first_reply_seconds_');
    expect(first[`parley_handoff_first_reply_seconds_sum{agent="${ada.agentId}"}`]).toBe(120);
    expect(first[`parley_handoff_first_reply_seconds_count{agent="${ada.agentId}"}`]).toBe(1);
    // Bea's customer waited from her handoff (at +0) to her message (at +5 min).
    expect(first[`parley_handoff_first_reply_seconds_sum{agent="${bea.agentId}"}`]).toBe(300);
    expect(first[`parley_handoff_first_reply_seconds_bucket{le="300",agent="${bea.agentId}"}`]).toBe(1);
    expect(first[`parley_handoff_first_reply_seconds_bucket{le="120",agent="${bea.agentId}"}`]).toBe(0);
    const resolution = await samples(p, 'parley_handoff_resolution_seconds_');
    expect(resolution[`parley_handoff_resolution_seconds_sum{agent="${ada.agentId}",by="agent"}`]).toBe(600);
    expect(resolution[`parley_handoff_resolution_seconds_count{agent="${ada.agentId}",by="agent"}`]).toBe(1);
    expect(Object.keys(resolution).filter((k) => k.includes(bea.agentId))).toEqual([]);
    expect(await samples(p, 'parley_handoffs_waiting')).toEqual({ parley_handoffs_waiting: 0 });
    expect(await samples(p, 'parley_handoffs_open')).toEqual({ [`parley_handoffs_open{agent="${bea.agentId}"}`]: 1 });

    // Bea resolves hers in the inbox, 10 minutes after her handoff: a resolution `by="resolved"`.
    const resolve = await fetch(`${p.url()}/api/v1/inbox/conversations/conv_web_cust-b/resolve`, { method: 'POST', headers: as(bea) });
    expect(resolve.status).toBe(200);
    await b.next((f) => f.type === 'status' && f.mode === 'assistant');
    const resolved = await samples(p, 'parley_handoff_resolution_seconds_');
    expect(resolved[`parley_handoff_resolution_seconds_sum{agent="${bea.agentId}",by="resolved"}`]).toBe(600);
    expect(resolved[`parley_handoff_resolution_seconds_count{agent="${bea.agentId}",by="resolved"}`]).toBe(1);

    // Bea's handoff request is hers in telemetry.
    await p.services.telemetry.flush();
    const requested = await fetch(`${p.url()}/api/v1/telemetry/events?type=handoff.requested&conversationId=conv_web_cust-b`, { headers: asService });
    expect(((await requested.json()) as { items: { data: unknown }[] }).items.map((e) => e.data)).toEqual([
      { source: 'api', reason: 'vip', agentId: bea.agentId },
    ]);
  });
});
