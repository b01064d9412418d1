// The history a widget gets on `ready`: messages, and each answered confirmation once, as a receipt at the
// place it was asked (its summary, with what became of it, and once an approved action ran, its result). A
// confirmation still waiting is left out: the gateway sends it as a `confirm` frame right after `ready`.
import type { HistoryEntry } from '../../sdk/src/widget-protocol.ts';
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
