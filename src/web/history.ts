// The history a widget gets on `ready`: messages, and each answered confirmation once, as a receipt at the
// place it was asked (its summary, with what became of it, and once an approved action ran, its result). A
// confirmation still waiting is left out: the gateway sends it as a `confirm` frame right after `ready`. Beside it,
// the handoff lines (`ready.handoffs`), each placed after the entry it followed.
import type { HistoryEntry, HistoryHandoffEntry } from '../../sdk/src/widget-protocol.ts';
import { sourcesOf, type MessageRecord } from '../conversations/history.ts';

const OUTCOMES = new Set(['approved', 'denied', 'expired', 'cancelled']);

export function toWidgetHistory(records: MessageRecord[]): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  const asked = new Map<string, HistoryEntry>();
  for (const r of records) {
    if (r.role === 'agent') {
      const name = (r.data?.author as { name?: unknown } | undefined)?.name;
      out.push({ id: r.id, role: 'agent', text: r.text, at: r.at, author: { name: typeof name === 'string' ? name : '' } });
      continue;
    }
    if (r.role === 'user' || r.role === 'assistant') {
      const entry: HistoryEntry = r.proactive
        ? { id: r.id, role: r.role, text: r.text, at: r.at, proactive: true }
        : { id: r.id, role: r.role, text: r.text, at: r.at };
      const sources = sourcesOf(r);
      if (sources) entry.sources = sources;
      if (r.role === 'assistant' && r.data?.unanswered === true) entry.unanswered = true;
      out.push(entry);
      continue;
    }
    if (r.role !== 'confirmation') continue;
    const outcome = r.data?.outcome;
    if (outcome === 'done' || outcome === 'failed') {
      const request = asked.get(r.id.slice(0, r.id.length - ':receipt'.length));
      if (request) request.receipt = { ok: outcome === 'done', text: r.text };
      continue;
    }
    if (outcome === 'requested') {
      const entry: HistoryEntry = { id: r.id, role: 'confirmation', text: r.text, at: r.at };
      asked.set(r.id, entry);
      out.push(entry);
    } else if (typeof outcome === 'string' && OUTCOMES.has(outcome)) {
      const id = r.id.slice(0, r.id.length - outcome.length - 1);
      const request = asked.get(id);
      if (request) request.outcome = outcome as HistoryEntry['outcome'];
      // The request fell outside the records read: the receipt names the function instead of its summary.
      else out.push({ id, role: 'confirmation', text: String(r.data?.name ?? ''), at: r.at, outcome: outcome as HistoryEntry['outcome'] });
    }
  }
  return out.filter((e) => e.role !== 'confirmation' || e.outcome);
}

/**
 * The handoff lines the customer saw live (`status` frames), from the stored handoff records, each placed after the
 * `history` entry it followed: handed to a person, a person joined, the assistant back. The `offline` record marks
 * the line of its handoff `away`, as its `handoff_notice` did live. A resolve shows no line of its own (nor live).
 */
export function toWidgetHandoffs(records: MessageRecord[], history: HistoryEntry[]): HistoryHandoffEntry[] {
  const kept = new Set(history.map((e) => e.id));
  const placed = new Set<string>();
  const out: HistoryHandoffEntry[] = [];
  let after: string | undefined;
  let waiting: HistoryHandoffEntry | undefined;
  for (const r of records) {
    if (r.role !== 'handoff') {
      const key = entryIdOf(r);
      if (kept.has(key) && !placed.has(key)) {
        placed.add(key);
        after = key;
      }
      continue;
    }
    const phase = r.data?.phase;
    const line: HistoryHandoffEntry = { id: r.id, mode: phase === 'released' ? 'assistant' : 'human', at: r.at };
    if (after !== undefined) line.after = after;
    if (phase === 'offline') {
      if (waiting) waiting.away = true;
      continue;
    }
    if (phase === 'joined') {
      const name = (r.data?.agent as { name?: unknown } | undefined)?.name;
      line.agent = { name: typeof name === 'string' ? name : '' };
    } else if (phase !== 'requested' && phase !== 'released') continue;
    waiting = phase === 'requested' ? line : undefined;
    out.push(line);
  }
  return out;
}

/** The id of the `history` entry a stored record is (or belongs to: a confirmation's outcome, its request's). */
function entryIdOf(r: MessageRecord): string {
  if (r.role !== 'confirmation') return r.id;
  const outcome = r.data?.outcome;
  return typeof outcome === 'string' && outcome !== 'requested' && r.id.endsWith(`:${outcome}`) ? r.id.slice(0, r.id.length - outcome.length - 1) : r.id;
}
