// Pre-aggregated series for the dashboard, computed from one range scan of
// the window (bounded), so the browser draws charts without raw records.
import type { TelemetryStore } from '../store/repos.ts';
import type { TelemetryEvent, TurnCallRecord } from '../store/telemetry-records.ts';
import { roundCost } from './pricing.ts';

export interface Summary {
  since: number;
  until: number;
  bucketMs: number;
  buckets: number[];
  messages: Record<string, number[]>; // "web in", "whatsapp out", …
  llm: { p50: (number | null)[]; p95: (number | null)[]; calls: number[] };
  tokens: Record<string, { prompt: number; completion: number; calls: number }>;
  /** Tokens (prompt + completion) per bucket, by model. */
  tokenSeries: Record<string, number[]>;
  proactive: { accepted: number[]; blockedByReason: Record<string, number>; blockedSeries: Record<string, number[]> };
  tools: Record<string, { invoked: number; failed: number }>;
  toolFailures: number[];
  whatsappStatuses: Record<string, number>;
  confirmations: Record<string, number>;
  /** What the window cost (README, "What it cost"): LLM calls by model, WhatsApp messages by pricing category, per bucket. */
  cost: { total: number; llm: number; whatsapp: number; series: number[]; byModel: Record<string, number>; byCategory: Record<string, number> };
  totals: { events: number; turnCalls: number; conversations: number; turns: number; messagesIn: number; messagesOut: number; truncated: boolean };
}

const MAX_RECORDS = 200_000;

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function roundCosts(c: Summary['cost']) {
  c.llm = roundCost(c.llm);
  c.whatsapp = roundCost(c.whatsapp);
  c.total = roundCost(c.llm + c.whatsapp);
  c.series = c.series.map(roundCost);
  for (const k of Object.keys(c.byModel)) c.byModel[k] = roundCost(c.byModel[k]);
  for (const k of Object.keys(c.byCategory)) c.byCategory[k] = roundCost(c.byCategory[k]);
}

/** One event into the summary `s`, in bucket `b`. */
function addEvent(s: Summary, e: TelemetryEvent, b: number, zeros: () => number[]) {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'message.in':
    case 'message.out': {
      const dir = e.type === 'message.in' ? 'in' : 'out';
      const key = `${e.channel ?? 'unknown'} ${dir}`;
      (s.messages[key] ??= zeros())[b]++;
      if (dir === 'in') s.totals.messagesIn++;
      else s.totals.messagesOut++;
      break;
    }
    case 'turn.ended':
      s.totals.turns++;
      break;
    case 'tool.invoked':
    case 'tool.failed': {
      const t = (s.tools[String(d.name)] ??= { invoked: 0, failed: 0 });
      if (e.type === 'tool.invoked') t.invoked++;
      else {
        t.failed++;
        s.toolFailures[b]++;
      }
      break;
    }
    case 'proactive.accepted':
      s.proactive.accepted[b]++;
      break;
    case 'proactive.blocked': {
      const reason = String(d.reason ?? 'unknown');
      s.proactive.blockedByReason[reason] = (s.proactive.blockedByReason[reason] ?? 0) + 1;
      (s.proactive.blockedSeries[reason] ??= zeros())[b]++;
      break;
    }
    case 'whatsapp.status':
      s.whatsappStatuses[String(d.status)] = (s.whatsappStatuses[String(d.status)] ?? 0) + 1;
      if (typeof d.cost === 'number') {
        const category = String((d.pricing as { category?: unknown } | undefined)?.category ?? 'unknown');
        s.cost.whatsapp += d.cost;
        s.cost.byCategory[category] = (s.cost.byCategory[category] ?? 0) + d.cost;
        s.cost.series[b] += d.cost;
      }
      break;
    case 'whatsapp.outbound':
      if (d.status === 'failed') s.whatsappStatuses.failed = (s.whatsappStatuses.failed ?? 0) + 1;
      break;
    default:
      if (e.type.startsWith('confirmation.')) {
        const outcome = e.type.slice('confirmation.'.length);
        s.confirmations[outcome] = (s.confirmations[outcome] ?? 0) + 1;
      }
  }
}

/** One LLM call into the summary `s`, in bucket `b`. */
function addTurnCall(s: Summary, c: TurnCallRecord, b: number, zeros: () => number[]) {
  s.llm.calls[b]++;
  const t = (s.tokens[c.model] ??= { prompt: 0, completion: 0, calls: 0 });
  t.prompt += c.promptTokens;
  t.completion += c.completionTokens;
  t.calls++;
  (s.tokenSeries[c.model] ??= zeros())[b] += c.promptTokens + c.completionTokens;
  if (c.cost !== undefined) {
    s.cost.llm += c.cost;
    s.cost.byModel[c.model] = (s.cost.byModel[c.model] ?? 0) + c.cost;
    s.cost.series[b] += c.cost;
  }
}

/** `channel`: only that channel's records (LLM calls by their conversation's channel, `conv_<channel>_…`). */
export async function summarize(telemetry: TelemetryStore, o: { since: number; until: number; bucketMs?: number; channel?: string }): Promise<Summary> {
  const span = Math.max(1, o.until - o.since);
  const bucketMs = o.bucketMs ?? Math.max(60_000, Math.ceil(span / 48 / 60_000) * 60_000);
  const n = Math.max(1, Math.ceil(span / bucketMs));
  const buckets = Array.from({ length: n }, (_, i) => o.since + i * bucketMs);
  const zeros = () => new Array<number>(n).fill(0);
  const idx = (at: number) => Math.min(n - 1, Math.max(0, Math.floor((at - o.since) / bucketMs)));
  const s: Summary = {
    since: o.since,
    until: o.until,
    bucketMs,
    buckets,
    messages: {},
    llm: { p50: [], p95: [], calls: zeros() },
    tokens: {},
    tokenSeries: {},
    proactive: { accepted: zeros(), blockedByReason: {}, blockedSeries: {} },
    tools: {},
    toolFailures: zeros(),
    whatsappStatuses: {},
    confirmations: {},
    cost: { total: 0, llm: 0, whatsapp: 0, series: zeros(), byModel: {}, byCategory: {} },
    totals: { events: 0, turnCalls: 0, conversations: 0, turns: 0, messagesIn: 0, messagesOut: 0, truncated: false },
  };
  const conversations = new Set<string>();
  const window = { since: o.since, until: o.until };
  for await (const e of telemetry.window('events', window)) {
    if (++s.totals.events > MAX_RECORDS) {
      s.totals.truncated = true;
      break;
    }
    if (o.channel && e.channel !== o.channel) continue;
    const b = idx(e.at);
    if (e.conversationId) conversations.add(e.conversationId);
    addEvent(s, e, b, zeros);
  }
  s.totals.conversations = conversations.size;
  const latencies: number[][] = Array.from({ length: n }, () => []);
  for await (const c of telemetry.window('turnCalls', window)) {
    if (++s.totals.turnCalls > MAX_RECORDS) {
      s.totals.truncated = true;
      break;
    }
    if (o.channel && !c.conversationId.startsWith(`conv_${o.channel}_`)) continue;
    const b = idx(c.at);
    latencies[b].push(c.durationMs);
    addTurnCall(s, c, b, zeros);
  }
  roundCosts(s.cost);
  for (const l of latencies) {
    l.sort((a, b) => a - b);
    s.llm.p50.push(percentile(l, 0.5));
    s.llm.p95.push(percentile(l, 0.95));
  }
  return s;
}
