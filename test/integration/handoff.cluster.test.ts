// Issue 35 on a cluster: two real Parley nodes on one PostgreSQL, each with its own injected clock (frozen, moved by
// the test). The handoff's deadlines are the owner's: when both clocks pass the offline deadline the customer is told
// once (one history record, one frame on a widget connected to the other node); when the owner leaves, the other node
// takes the conversation over and hands it back once when `return_to_assistant_after_minutes` has passed. This file
// starts its nodes on PostgreSQL itself, whatever the run's engine (listed in vitest.config.ts's NO_ENGINE).
import { afterEach, describe, expect, it } from 'vitest';
import { createClock, type Clock } from '../../src/clock.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

const MIN = 60_000;
const START = Date.UTC(2026, 2, 25, 9, 0);
const HANDOFF = { offline_after_minutes: 10, return_to_assistant_after_minutes: 60 };

async function node(url: string, nodeId: string, clock: Clock): Promise<TestParley> {
  const p = await startParley({ clock, config: { handoff: HANDOFF, storage: { engine: 'postgres', url }, cluster: { node_id: nodeId, lease_seconds: 5 } } });
  closers.push(() => p.close());
  return p;
}

async function handoffRecords(p: TestParley, conversationId: string): Promise<string[]> {
  const res = await fetch(`${p.url()}/conversations/${conversationId}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  return ((await res.json()) as { messages: { role: string; text: string }[] }).messages.filter((m) => m.role === 'handoff').map((m) => m.text);
}

describe('handoff deadlines on a cluster (PostgreSQL)', () => {
  it('only the owner acts: one offline notice; after it leaves, the node that takes over hands it back once', { timeout: 120_000 }, async () => {
    const url = await createTestDatabase();
    const clockA = createClock(() => START);
    const clockB = createClock(() => START);
    const a = await node(url, 'node-a', clockA);
    const b = await node(url, 'node-b', clockB);
    const onA = await startWidgetSession(a.url(), { customerId: 'cust-c', email: 'cust-c@example.com' });
    closers.push(async () => onA.close());
    onA.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
    await onA.next((f) => f.type === 'status' && f.mode === 'human', 20_000);
    const onB = await startWidgetSession(b.url(), { customerId: 'cust-c', email: 'cust-c@example.com' });
    closers.push(async () => onB.close());
    await onB.next((f) => f.type === 'handoff_notice' && f.kind === 'open', 20_000);

    clockA.setOffset(11 * MIN);
    clockB.setOffset(11 * MIN);
    expect(await onB.next((f) => f.type === 'handoff_notice' && f.kind === 'offline', 20_000)).toMatchObject({ askEmail: true });
    await expect.poll(() => handoffRecords(b, 'conv_web_cust-c'), { timeout: 20_000 }).toEqual(['requested', 'offline']);

    // The owner leaves; B takes the conversation over with its deadlines.
    await a.close();
    clockB.setOffset(61 * MIN);
    await expect.poll(() => handoffRecords(b, 'conv_web_cust-c'), { timeout: 60_000, interval: 200 }).toEqual(['requested', 'offline', 'released']);
    expect(await onB.next((f) => f.type === 'status' && f.mode === 'assistant', 20_000)).toMatchObject({ mode: 'assistant' });
    expect(onB.frames.filter((f) => f.type === 'handoff_notice' && f.kind === 'offline')).toHaveLength(1);
  });
});
