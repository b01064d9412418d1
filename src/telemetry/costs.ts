// What conversations cost, per turn, conversation, customer or day (README, "What it cost"): LLM calls' costs (computed
// from `llm.prices` when each call was recorded) and WhatsApp messages' costs (from the `sent` status's pricing
// category and `channels.whatsapp.prices`), summed over one bounded scan of a time window.
import type { TelemetryStore } from '../store/repos.ts';
import { roundCost } from './pricing.ts';

export type CostGrouping = 'turn' | 'conversation' | 'customer' | 'day';

export interface CostLine {
  cost: number;
  llm: number;
  whatsapp: number;
  calls: number;
  /** LLM calls whose model has no price in `llm.prices` (their tokens are counted, their cost is not known). */
  unpricedCalls: number;
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
  whatsappMessages: number;
}

export interface CostReport {
  currency: string;
  since: number;
  until: number;
  by: CostGrouping;
  total: CostLine;
  groups: (CostLine & { key: string })[];
  truncated: boolean;
}

const MAX_RECORDS = 200_000;

const emptyLine = (): CostLine => ({
  cost: 0,
  llm: 0,
  whatsapp: 0,
  calls: 0,
  unpricedCalls: 0,
  promptTokens: 0,
  cachedPromptTokens: 0,
  completionTokens: 0,
  whatsappMessages: 0,
});

/** The UTC day of a time, `YYYY-MM-DD`. */
export const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

export interface CostQuery {
  since: number;
  until: number;
  by: CostGrouping;
  conversationId?: string;
  customerId?: string;
  currency: string;
  limit?: number;
}

export async function costReport(telemetry: TelemetryStore, q: CostQuery): Promise<CostReport> {
  const groups = new Map<string, CostLine>();
  const total = emptyLine();
  let scanned = 0;
  let truncated = false;
  const wanted = (r: { conversationId?: string; customerId?: string }) =>
    (!q.conversationId || r.conversationId === q.conversationId) && (!q.customerId || r.customerId === q.customerId);
  const lineFor = (key: string | undefined) => {
    let line = groups.get(key ?? '');
    if (!line) groups.set(key ?? '', (line = emptyLine()));
    return line;
  };
  const keyOf = (r: { at: number; conversationId?: string; customerId?: string; turnId?: string }) =>
    q.by === 'day' ? dayOf(r.at) : q.by === 'conversation' ? r.conversationId : q.by === 'customer' ? r.customerId : r.turnId;
  const window = { since: q.since, until: q.until };
  for await (const c of telemetry.window('turnCalls', window)) {
    if (++scanned > MAX_RECORDS) {
      truncated = true;
      break;
    }
    if (!wanted(c)) continue;
    for (const line of [total, lineFor(keyOf(c))]) {
      line.calls++;
      line.promptTokens += c.promptTokens;
      line.cachedPromptTokens += c.cachedPromptTokens ?? 0;
      line.completionTokens += c.completionTokens;
      if (c.cost === undefined) line.unpricedCalls++;
      else line.llm += c.cost;
    }
  }
  // A WhatsApp message belongs to no turn: by turn, its cost is counted in the total only.
  for await (const e of telemetry.window('events', window)) {
    if (truncated || ++scanned > MAX_RECORDS) {
      truncated = true;
      break;
    }
    const cost = e.type === 'whatsapp.status' ? (e.data as { cost?: unknown }).cost : undefined;
    if (typeof cost !== 'number' || !wanted(e)) continue;
    for (const line of q.by === 'turn' ? [total] : [total, lineFor(keyOf(e))]) {
      line.whatsapp += cost;
      line.whatsappMessages++;
    }
  }
  const finish = (l: CostLine) => Object.assign(l, { llm: roundCost(l.llm), whatsapp: roundCost(l.whatsapp), cost: roundCost(l.llm + l.whatsapp) });
  const rows = [...groups.entries()].map(([key, l]) => Object.assign({ key }, finish(l)));
  rows.sort(q.by === 'day' ? (a, b) => (a.key < b.key ? -1 : 1) : (a, b) => b.cost - a.cost || (a.key < b.key ? -1 : 1));
  return { currency: q.currency, since: q.since, until: q.until, by: q.by, total: finish(total), groups: rows.slice(0, q.limit ?? 100), truncated };
}
