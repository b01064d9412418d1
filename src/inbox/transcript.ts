// Pure: a conversation, whole, from its stored history records and its internal notes: the customer's, the
// assistant's, agents' and proactive messages, each tool call (the `invoked` record and its `result`/`error` record
// become one entry, at the time it was called), each confirmation and its outcome, handoffs and releases, and the
// notes, in order of time (ties: history before notes, history in its own order). An assistant's reply keeps the
// sources it cites. Every resolve is in the history: a release that says `resolved` (the entry says who, `released`)
// or a `resolved` handoff record (no person had it). Conversations resolved before the history said so show the inbox
// thread's one stored resolution instead (`legacyResolution`).
import { sourcesOf } from '../conversations/history.ts';
import type { InboxNote, InboxThread, MessageRecord } from '../store/model.ts';
import type { TranscriptEntry } from './wire.ts';

type ToolEntry = Extract<TranscriptEntry, { kind: 'tool' }>;
const RECEIPT = ':receipt';

const callIdOf = (id: string) => {
  const colon = id.lastIndexOf(':');
  return colon > 0 ? id.slice(0, colon) : id;
};

const resolverOf = (v: unknown) => {
  const r = v as { agentId?: unknown; name?: unknown } | undefined;
  return typeof r?.agentId === 'string' && typeof r.name === 'string' ? { agentId: r.agentId, name: r.name } : undefined;
};
const phaseOf = (r: MessageRecord) => (r.role === 'handoff' ? String(r.data?.phase ?? r.text) : undefined);

/** A handoff record; a resolve (a release that says so, or a `resolved` record) as a `resolved` entry, by whom. */
function handoffEntry(r: MessageRecord): TranscriptEntry {
  const d = r.data ?? {};
  const by = resolverOf(d.resolvedBy);
  if (d.resolved === true && by && d.phase === 'released') return { kind: 'resolved', id: r.id, at: r.at, by, released: true };
  if (d.resolved === true && by && d.phase === 'resolved') return { kind: 'resolved', id: r.id, at: r.at, by };
  const e: Extract<TranscriptEntry, { kind: 'handoff' }> = { kind: 'handoff', id: r.id, at: r.at, phase: String(d.phase ?? r.text) };
  if (typeof d.reason === 'string') e.reason = d.reason;
  if (typeof d.by === 'string') e.by = d.by;
  const agent = d.agent as { name?: string } | undefined;
  if (agent?.name) e.agent = agent.name;
  return e;
}

function messageEntry(r: MessageRecord): TranscriptEntry | undefined {
  const d = r.data ?? {};
  switch (r.role) {
    case 'user':
      return { kind: 'customer', id: r.id, at: r.at, text: r.text };
    case 'assistant': {
      const e: Extract<TranscriptEntry, { kind: 'assistant' }> = { kind: 'assistant', id: r.id, at: r.at, text: r.text };
      if (r.proactive) e.proactive = true;
      const sources = sourcesOf(r);
      if (sources) e.sources = sources;
      return e;
    }
    case 'agent':
      return { kind: 'agent', id: r.id, at: r.at, text: r.text, author: (d.author as { name: string; agentId?: string }) ?? { name: 'Agent' } };
    case 'confirmation': {
      const outcome = typeof d.outcome === 'string' ? d.outcome : 'requested';
      const e: TranscriptEntry = { kind: 'confirmation', id: r.id, at: r.at, outcome, text: r.text };
      if (typeof d.name === 'string') e.name = d.name;
      return e;
    }
    case 'handoff':
      return handoffEntry(r);
    default:
      return undefined;
  }
}

/**
 * A resolution stored only in the inbox thread (the conversation was resolved before its history recorded resolves:
 * no resolve in the history since the handoff it ended) as an entry, and the id of the release record it stands in
 * for: the first release after that handoff (the `requested` record at `handoffSince`), when it was an agent's.
 */
function legacyResolution(records: MessageRecord[], thread: InboxThread | undefined) {
  if (thread?.resolvedAt === undefined || !thread.resolvedBy) return undefined;
  if (records.some((r) => r.role === 'handoff' && r.data?.resolved === true && r.at >= thread.handoffSince)) return undefined;
  const by = { agentId: thread.resolvedBy.agentId, name: thread.resolvedBy.name };
  const asked = records.findIndex((r) => phaseOf(r) === 'requested' && r.at === thread.handoffSince);
  const release = asked < 0 ? undefined : records.slice(asked + 1).find((r) => phaseOf(r) === 'released');
  if (release && release.data?.by === 'agent') {
    const entry: TranscriptEntry = { kind: 'resolved', id: release.id, at: release.at, by, released: true };
    return { entry, replaces: release.id };
  }
  const entry: TranscriptEntry = { kind: 'resolved', id: `resolved:${thread.resolvedAt}`, at: thread.resolvedAt, by };
  return { entry, replaces: undefined };
}

/** `thread`: the conversation's inbox thread, whose stored resolution the transcript shows when the history has none. */
export function transcriptOf(records: MessageRecord[], notes: InboxNote[], thread?: InboxThread): TranscriptEntry[] {
  const resolved = legacyResolution(records, thread);
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
      const e = resolved && r.id === resolved.replaces ? resolved.entry : messageEntry(r);
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
  if (resolved && !resolved.replaces) out.push(resolved.entry);
  for (const n of notes) out.push({ kind: 'note', id: n.id, at: n.at, text: n.text, author: n.author });
  // A stable sort: history keeps its own order, notes fall in by time.
  return out
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.at - b.e.at || a.i - b.i)
    .map((x) => x.e);
}
