// Issue 39 part 5: the metrics the alert rules watch (deploy/prometheus/alerts.yml) — turns that ended on an error,
// handoffs waiting for an agent and the oldest wait (on the injected clock), the store's writes failing, cluster nodes
// lost — fed by a real telemetry recorder on a real LMDB store.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/telemetry/metrics.ts';
import { createTelemetryRecorder } from '../../src/telemetry/recorder.ts';
import { parsePrometheusText } from '../support/prom-text.ts';
import { openTestStore } from '../support/store.ts';

const T0 = Date.UTC(2026, 0, 1);
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup() {
  const store = await openTestStore();
  const clock = createManualClock(T0);
  const telemetry = createTelemetryRecorder({ store, clock, logger: createLogger('silent') });
  let database = 'ok';
  let nodes = 1;
  const metrics = createMetrics(telemetry, { now: () => clock.now(), storeDatabase: () => database, clusterNodes: () => nodes });
  cleanup.push(
    () => store.close(),
    () => telemetry.close(),
    () => metrics.close(),
  );
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const family = parsePrometheusText(await metrics.text()).get(name);
    expect(family, name).toBeDefined();
    return family!.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;
  };
  const set = { database: (v: string) => void (database = v), nodes: (n: number) => void (nodes = n) };
  return { clock, telemetry, value, set };
}

const call = (turnId: string, ok: boolean) => ({
  turnId,
  conversationId: 'c1',
  customerId: 'u1',
  sequence: 1,
  provider: 'openai',
  model: 'm',
  purpose: 'chat',
  durationMs: 5,
  promptTokens: 0,
  completionTokens: 0,
  toolCalls: [],
  ok,
});

describe('health metrics', () => {
  it('a turn whose last LLM call failed counts as a turn error; a failed attempt followed by a good one does not', async () => {
    const { telemetry, value } = await setup();
    telemetry.turnCall(call('t1', false));
    telemetry.event({ type: 'turn.ended', channel: 'web', conversationId: 'c1', data: { turnId: 't1' } });
    telemetry.turnCall(call('t2', false));
    telemetry.turnCall(Object.assign(call('t2', true), { sequence: 2 }));
    telemetry.event({ type: 'turn.ended', channel: 'web', conversationId: 'c1', data: { turnId: 't2' } });
    telemetry.turnCall(call('t3', false));
    telemetry.event({ type: 'turn.ended', channel: 'whatsapp', conversationId: 'c2', data: { turnId: 't3' } });
    expect(await value('parley_turn_errors_total', { channel: 'web' })).toBe(1);
    expect(await value('parley_turn_errors_total', { channel: 'whatsapp' })).toBe(1);
    expect(await value('parley_turns_total', { channel: 'web' })).toBe(2);
  });

  it('handoffs waiting for an agent, and how long the oldest has waited (injected clock); an agent joining or a release ends the wait', async () => {
    const { clock, telemetry, value } = await setup();
    expect(await value('parley_handoff_oldest_wait_seconds')).toBe(0);
    telemetry.event({ type: 'handoff.requested', conversationId: 'c1', data: {} });
    clock.advance(60_000);
    telemetry.event({ type: 'handoff.requested', conversationId: 'c2', data: {} });
    clock.advance(240_000);
    expect(await value('parley_handoffs_waiting')).toBe(2);
    expect(await value('parley_handoff_oldest_wait_seconds')).toBe(300);
    telemetry.event({ type: 'handoff.joined', conversationId: 'c1', data: { agent: 'ann' } });
    expect(await value('parley_handoff_oldest_wait_seconds')).toBe(240);
    telemetry.event({ type: 'handoff.released', conversationId: 'c2', data: { by: 'agent' } });
    expect(await value('parley_handoffs_waiting')).toBe(0);
    expect(await value('parley_handoff_oldest_wait_seconds')).toBe(0);
  });

  it("the store's writes failing, the cluster's nodes, and nodes lost", async () => {
    const { telemetry, value, set } = await setup();
    expect(await value('parley_store_write_failing')).toBe(0);
    set.database('write_failing: ENOSPC');
    expect(await value('parley_store_write_failing')).toBe(1);
    set.nodes(3);
    expect(await value('parley_cluster_nodes')).toBe(3);
    telemetry.event({ type: 'cluster.peers_gone', data: { nodes: ['n2', 'n3'] } });
    telemetry.event({ type: 'cluster.lease_lost', data: { nodeId: 'n1', reason: 'lease ended' } });
    expect(await value('parley_cluster_nodes_lost_total', { whose: 'peer' })).toBe(2);
    expect(await value('parley_cluster_nodes_lost_total', { whose: 'self' })).toBe(1);
  });
});
