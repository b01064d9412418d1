// GET /api/v1/telemetry/handoffs: the human side over a window (issue 35, part 6), for the dashboard — how many
// handoffs, time to first agent reply (`handoff.joined`'s `waitedMs`) and to resolution (`handoff.released`'s
// `durationMs`, a resolve's too), overall and per agent (`agentId`; `none`: messages sent with the service secret).
// Read from the stored telemetry, so every node answers the same.
import type { TelemetryStore } from '../store/repos.ts';

export interface HandoffTimes {
  count: number;
  medianMs: number | null;
  p90Ms: number | null;
}

export interface HandoffSummary {
  since: number;
  until: number;
  requested: number;
  firstReply: HandoffTimes;
  resolution: HandoffTimes;
  agents: { agentId: string; name?: string; firstReply: HandoffTimes; resolution: HandoffTimes }[];
}

const NONE = 'none';

/** Nearest-rank percentile of sorted values. */
const rank = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] : null);

export function times(values: number[]): HandoffTimes {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, medianMs: rank(sorted, 0.5), p90Ms: rank(sorted, 0.9) };
}

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);

export async function handoffSummary(
  store: Pick<TelemetryStore, 'window'>,
  o: { since: number; until: number; agentName?: (agentId: string) => string | undefined },
): Promise<HandoffSummary> {
  let requested = 0;
  const first: number[] = [];
  const resolved: number[] = [];
  const per = new Map<string, { first: number[]; resolved: number[] }>();
  const of = (agentId: string) => per.get(agentId) ?? per.set(agentId, { first: [], resolved: [] }).get(agentId)!;
  for await (const e of store.window('events', { since: o.since, until: o.until })) {
    if (!e.type.startsWith('handoff.')) continue;
    const d = (e.data ?? {}) as Record<string, unknown>;
    if (e.type === 'handoff.requested') requested++;
    else if (e.type === 'handoff.joined' && typeof d.waitedMs === 'number') {
      first.push(d.waitedMs);
      of(str(d.agentId) ?? NONE).first.push(d.waitedMs);
    } else if (e.type === 'handoff.released' && typeof d.durationMs === 'number') {
      resolved.push(d.durationMs);
      of(str(d.agentId) ?? str(d.lastAgentId) ?? NONE).resolved.push(d.durationMs);
    }
  }
  const agents = [...per].map(([agentId, v]) => {
    const name = agentId === NONE ? undefined : o.agentName?.(agentId);
    return Object.assign({ agentId }, name ? { name } : {}, { firstReply: times(v.first), resolution: times(v.resolved) });
  });
  agents.sort((a, b) => b.firstReply.count + b.resolution.count - (a.firstReply.count + a.resolution.count) || a.agentId.localeCompare(b.agentId));
  return { since: o.since, until: o.until, requested, firstReply: times(first), resolution: times(resolved), agents };
}
