// The human side in /metrics (issue 35, part 6), per agent and overall (sum the `agent` label):
//   parley_handoff_first_reply_seconds{agent}   handoff → the first agent message (telemetry `handoff.joined`, `waitedMs`)
//   parley_handoff_resolution_seconds{agent,by} handoff → resolved: an agent released it (`by="agent"`), it went back
//                                               after handoff.return_to_assistant_after_minutes (`by="idle"`), or an agent
//                                               resolved it (`by="resolved"`: telemetry `handoff.released` with `resolved: true`)
//   parley_handoffs_open{agent}                 conversations with a person, by the last agent who wrote
// (`parley_handoffs_waiting` and `parley_handoff_oldest_wait_seconds`, the alerts' gauges, are in health-metrics.ts.)
// `agent` is the signed-in agent's id; `none` for messages sent with the service secret (systems). Each node reports
// the conversations it owns; a cluster's figures are the sum over its nodes.
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { TelemetryEvent } from '../store/telemetry-records.ts';

export interface HandoffGauges {
  /** Conversations a person has on this node: whether an agent has written, and the last one's id. */
  handoffs?(): { since: number; answered: boolean; agentId?: string }[];
}

/** From 30 s to a day. */
const BUCKETS = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14_400, 28_800, 86_400];

const NONE = 'none';
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);

export function createHandoffMetrics(registry: Registry, gauges: HandoffGauges) {
  const firstReply = new Histogram({
    name: 'parley_handoff_first_reply_seconds',
    help: 'Time from a handoff to the first agent message, by agent',
    labelNames: ['agent'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const resolution = new Histogram({
    name: 'parley_handoff_resolution_seconds',
    help: 'Time from a handoff to its resolution (released by an agent, resolved, or handed back after return_to_assistant_after_minutes), by agent',
    labelNames: ['agent', 'by'],
    buckets: BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'parley_handoffs_open',
    help: 'Conversations with a person, by the last agent who wrote',
    labelNames: ['agent'],
    registers: [registry],
    collect() {
      this.reset();
      const counts = new Map<string, number>();
      for (const h of gauges.handoffs?.() ?? []) if (h.answered) counts.set(h.agentId ?? NONE, (counts.get(h.agentId ?? NONE) ?? 0) + 1);
      for (const [agent, n] of counts) this.set({ agent }, n);
    },
  });
  return {
    event(e: TelemetryEvent) {
      const d = (e.data ?? {}) as Record<string, unknown>;
      if (e.type === 'handoff.joined') {
        const waited = num(d.waitedMs);
        if (waited !== undefined) firstReply.observe({ agent: str(d.agentId) ?? NONE }, waited / 1000);
      } else if (e.type === 'handoff.released') {
        const took = num(d.durationMs);
        const by = d.resolved === true ? 'resolved' : d.by === 'idle' ? 'idle' : 'agent';
        if (took !== undefined) resolution.observe({ agent: str(d.agentId) ?? str(d.lastAgentId) ?? NONE, by }, took / 1000);
      }
    },
  };
}
