// The metrics Parley's alert rules watch (deploy/prometheus/alerts.yml) that plain counters of the telemetry stream do
// not give: turns that ended on an error, handed-over conversations waiting for an agent (how many, the oldest's
// wait), the store's writes failing, and the cluster's nodes lost. Fed by the same telemetry stream as metrics.ts,
// plus gauges read at scrape time.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { HandoffGauges } from './handoff-metrics.ts';
import type { TelemetryEvent, TurnCallRecord } from './types.ts';

export interface HealthGauges extends HandoffGauges {
  /** The store's check (`ok`, `write_failing: ENOSPC`, `unreachable: …`). */
  storeDatabase?(): string;
  /** Nodes alive in this node's view of the cluster (itself included). */
  clusterNodes?(): number;
}

/** Turns whose last LLM call is remembered at most (a turn's calls come before its end). */
const MAX_OPEN_TURNS = 10_000;

export function createHealthMetrics(registry: Registry, o: { now: () => number; gauges?: HealthGauges }) {
  const turnErrors = new Counter({
    name: 'parley_turn_errors_total',
    help: "Turns that ended on an error (the turn's last LLM call failed: the customer got an apology)",
    labelNames: ['channel'],
    registers: [registry],
  });
  const lost = new Counter({
    name: 'parley_cluster_nodes_lost_total',
    help: 'Cluster nodes lost: this node its own lease (self), or peers gone from one heartbeat to the next (peer)',
    labelNames: ['whose'],
    registers: [registry],
  });
  // Handed over, no agent yet: conversation → when it was handed over. From the conversations this node owns when the
  // host reports them (`handoffs`: right after a restart too), else from the telemetry stream seen since start.
  const waiting = new Map<string, number>();
  const waitingSince = (): number[] => {
    const owned = o.gauges?.handoffs?.();
    return owned ? owned.filter((h) => !h.answered).map((h) => h.since) : [...waiting.values()];
  };
  new Gauge({
    name: 'parley_handoffs_waiting',
    help: 'Conversations handed to a person that no agent has answered yet (this node)',
    registers: [registry],
    collect() {
      this.set(waitingSince().length);
    },
  });
  new Gauge({
    name: 'parley_handoff_oldest_wait_seconds',
    help: 'How long the longest-waiting handed-over conversation has waited for an agent (0: none waits)',
    registers: [registry],
    collect() {
      let oldest = Infinity;
      for (const at of waitingSince()) oldest = Math.min(oldest, at);
      this.set(oldest === Infinity ? 0 : Math.max(0, o.now() - oldest) / 1000);
    },
  });
  new Gauge({
    name: 'parley_store_write_failing',
    help: "1 while the store's writes fail (a full disk, the database unreachable), else 0",
    registers: [registry],
    collect() {
      const check = o.gauges?.storeDatabase?.() ?? 'ok';
      this.set(check === 'ok' ? 0 : 1);
    },
  });
  new Gauge({
    name: 'parley_cluster_nodes',
    help: "Nodes alive in this node's view of the cluster, itself included",
    registers: [registry],
    collect() {
      this.set(o.gauges?.clusterNodes?.() ?? 1);
    },
  });

  const lastCallOk = new Map<string, boolean>();
  return {
    event(e: TelemetryEvent) {
      const conversation = e.conversationId;
      if (e.type === 'turn.ended') {
        const turnId = (e.data as { turnId?: unknown }).turnId;
        if (typeof turnId !== 'string') return;
        if (lastCallOk.get(turnId) === false) turnErrors.labels(e.channel ?? 'unknown').inc();
        lastCallOk.delete(turnId);
      } else if (e.type === 'handoff.requested' && conversation) {
        if (!waiting.has(conversation)) waiting.set(conversation, e.at);
      } else if ((e.type === 'handoff.joined' || e.type === 'handoff.released') && conversation) waiting.delete(conversation);
      else if (e.type === 'cluster.lease_lost') lost.labels('self').inc();
      else if (e.type === 'cluster.peers_gone') lost.labels('peer').inc(Array.isArray(e.data.nodes) ? e.data.nodes.length : 1);
    },
    turnCall(c: TurnCallRecord) {
      if (c.purpose !== 'chat') return;
      if (lastCallOk.size >= MAX_OPEN_TURNS && !lastCallOk.has(c.turnId)) lastCallOk.clear();
      lastCallOk.set(c.turnId, c.ok);
    },
  };
}
