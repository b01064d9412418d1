// Pure: a conversation, whole, from its stored history records and its internal notes: the customer's, the
// assistant's, agents' and proactive messages, each tool call (the `invoked` record and its `result`/`error` record
// become one entry, at the time it was called), each confirmation and its outcome, handoffs and releases, and the
// notes, in order of time (ties: history before notes, history in its own order).
import type { InboxNote, MessageRecord } from '../store/model.ts';
import type { TranscriptEntry } from './wire.ts';

type ToolEntry = Extract<TranscriptEntry, { kind: 'tool' }>;
const RECEIPT = ':receipt';

const callIdOf = (id: string) => {
  const colon = id.lastIndexOf(':');
  return colon > 0 ? id.slice(0, colon) : id;
};

function messageEntry(r: MessageRecord): TranscriptEntry | undefined {
  const d = r.data ?? {};
  switch (r.role) {
    case 'user':
      return { kind: 'customer', id: r.id, at: r.at, text: r.text };
    case 'assistant':
      return r.proactive ? { kind: 'assistant', id: r.id, at: r.at, text: r.text, proactive: true } : { kind: 'assistant', id: r.id, at: r.at, text: r.text };
    case 'agent':
      return { kind: 'agent', id: r.id, at: r.at, text: r.text, author: (d.author as { name: string; agentId?: string }) ?? { name: 'Agent' } };
    case 'confirmation': {
      const outcome = typeof d.outcome === 'string' ? d.outcome : 'requested';
      const e: TranscriptEntry = { kind: 'confirmation', id: r.id, at: r.at, outcome, text: r.text };
      if (typeof d.name === 'string') e.name = d.name;
      return e;
    }
    case 'handoff': {
      const e: Extract<TranscriptEntry, { kind: 'handoff' }> = { kind: 'handoff', id: r.id, at: r.at, phase: String(d.phase ?? r.text) };
      if (typeof d.reason === 'string') e.reason = d.reason;
      if (typeof d.by === 'string') e.by = d.by;
      const agent = d.agent as { name?: string } | undefined;
      if (agent?.name) e.agent = agent.name;
      return e;
    }
    default:
      return undefined;
  }
}

export function transcriptOf(records: MessageRecord[], notes: InboxNote[]): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  const calls = new Map<string, ToolEntry>();
  const answered = new Map<string, Extract<TranscriptEntry, { kind: 'confirmation' }>>();
  for (const r of records) {
    if (r.role !== 'tool') {
      // What an approved action came to (`<id>:receipt`) belongs to the customer's answer, as in the widget.
      const answer = r.role === 'confirmation' && r.id.endsWith(RECEIPT) ? answered.get(r.id.slice(0, -RECEIPT.length)) : undefined;
      if (answer) {
        answer.receipt = { ok: r.data?.outcome === 'done', text: r.text };
        continue;
      }
      const e = messageEntry(r);
      // The answer's id is `<confirmation id>:<outcome>`: the receipt finds it by the confirmation's id.
      if (e?.kind === 'confirmation' && e.outcome !== 'requested') answered.set(callIdOf(e.id), e);
      if (e) out.push(e);
      continue;
    }
    const d = r.data ?? {};
    const callId = callIdOf(r.id);
    let call = calls.get(callId);
    if (!call) {
      call = { kind: 'tool', id: callId, at: r.at, name: String(d.name ?? 'tool') };
      calls.set(callId, call);
      out.push(call);
    }
    if (d.phase === 'invoked') call.args = d.args;
    else {
      call.ok = d.ok === true;
      if (d.content !== undefined) call.result = d.content;
      if (typeof d.error === 'string') call.error = d.error;
      if (typeof d.durationMs === 'number') call.durationMs = d.durationMs;
    }
  }
  for (const n of notes) out.push({ kind: 'note', id: n.id, at: n.at, text: n.text, author: n.author });
  // A stable sort: history keeps its own order, notes fall in by time.
  return out
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.at - b.e.at || a.i - b.i)
    .map((x) => x.e);
}
