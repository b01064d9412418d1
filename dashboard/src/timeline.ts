// A conversation's timeline, turn by turn: every event and LLM call in order.
import { allPages, type EventRecord, type TurnCall } from './api.ts';
import { fmtDuration, fmtMs, fmtTime, h } from './dom.ts';
import { exportButton } from './export-scenario.ts';

const quoted = (t: unknown) => (typeof t === 'string' ? `“${t}”` : undefined);

/** A knowledge search in words: what it found and cited (the question itself only with telemetry.store_text). */
function knowledgeSearch(d: Record<string, unknown>): string {
  const hits = Array.isArray(d.hits) ? (d.hits as { cited?: boolean }[]) : [];
  const asked = quoted(d.query) ? ` for ${quoted(d.query)}` : '';
  if (hits.length === 0) return `searched the knowledge base${asked}: nothing found`;
  const cited = hits.filter((x) => x.cited).length;
  return `searched the knowledge base${asked}: ${hits.length} ${hits.length === 1 ? 'passage' : 'passages'}, ${cited} cited`;
}

/** One line per event, in words; message text only when Parley keeps it (telemetry.store_text). */
export function describe(e: EventRecord): string {
  const d = e.data;
  switch (e.type) {
    case 'tool.invoked':
      return `called ${d.name}`;
    case 'tool.result':
      return `${d.name} answered${typeof d.durationMs === 'number' ? ` in ${fmtMs(d.durationMs)}` : ''}`;
    case 'tool.failed':
      return `${d.name} failed: ${d.error ?? ''}`;
    case 'daemon.verdict':
      return `review: ${d.verdict} — ${d.summary ?? ''}`;
    case 'message.in':
      return quoted(d.text) ? `customer: ${quoted(d.text)}` : `customer wrote (${d.length ?? '?'} characters)`;
    case 'message.out':
      if (d.proactive) return quoted(d.text) ? `proactive: ${quoted(d.text)}` : 'proactive message sent';
      return quoted(d.text) ? `assistant: ${quoted(d.text)}` : `assistant replied (${d.length ?? '?'} characters)`;
    case 'message.agent':
      return `${(d.author as { name?: string } | undefined)?.name ?? 'agent'} replied${quoted(d.text) ? `: ${quoted(d.text)}` : ''}`;
    case 'turn.started':
      return 'turn started';
    case 'turn.ended':
      return typeof d.startedAt === 'number' ? `turn ended (${fmtMs(e.at - d.startedAt)})` : 'turn ended';
    case 'confirmation.requested':
      return `asked the customer to confirm ${d.name}${quoted(d.summary) ? `: ${quoted(d.summary)}` : ''}`;
    case 'confirmation.approved':
      return `customer approved ${d.name}`;
    case 'confirmation.denied':
      return `customer declined ${d.name}`;
    case 'confirmation.expired':
      return `${d.name}: not confirmed in time`;
    case 'confirmation.cancelled':
      return `${d.name}: cancelled, a person took over`;
    case 'handoff.requested':
      return `handed over to a person${typeof d.reason === 'string' ? ` (${d.reason})` : ''}`;
    case 'handoff.joined':
      return `${(d.agent as { name?: string } | undefined)?.name ?? 'an agent'} joined${typeof d.waitedMs === 'number' ? ` after ${fmtDuration(d.waitedMs)}` : ''}`;
    case 'handoff.offline':
      return 'no one from the team answered in time: the customer was told they will reply here';
    case 'handoff.released':
      return d.resolved
        ? 'resolved by an agent: the assistant has it again'
        : d.by === 'idle'
          ? 'no agent message for too long: the assistant took over again'
          : 'the assistant took over again';
    case 'knowledge.search':
      return knowledgeSearch(d);
    case 'conversation.outcome':
      return `outcome: ${String(d.outcome).replace(/_/g, ' ')}${typeof d.reason === 'string' ? ` (${d.reason.replace(/_/g, ' ')})` : ''}`;
    case 'conversation.rating':
      return `rated ${d.score} of 5${quoted(d.comment) ? `: ${quoted(d.comment)}` : ''}`;
    case 'error':
      return `error ${d.code ?? d.where ?? ''}${typeof d.message === 'string' ? `: ${d.message}` : ''}`;
    case 'whatsapp.status':
      return `delivery: ${d.status}`;
    case 'tools.unavailable':
      return 'no backend registered: the turn ran without its functions';
    default:
      return Object.keys(d).length ? `${e.type} ${JSON.stringify(d)}` : e.type;
  }
}

/** The colour family of an entry: message, tool, confirmation, handoff, llm, error. */
const family = (kind: string) => {
  if (kind.startsWith('llm')) return 'llm';
  if (kind === 'error' || kind === 'tools.unavailable' || kind.endsWith('.failed') || kind.endsWith('.dead_letter')) return 'bad';
  return kind.split('.')[0];
};

export async function renderTimeline(container: HTMLElement, conversationId: string) {
  container.replaceChildren(h('p', {}, 'Loading…'));
  const q = `conversationId=${encodeURIComponent(conversationId)}`;
  const [events, calls] = await Promise.all([allPages<EventRecord>(`/api/v1/telemetry/events?${q}`), allPages<TurnCall>(`/api/v1/telemetry/turn-calls?${q}`)]);
  const turns = new Map<string, { started: number; items: { at: number; id: string; node: HTMLElement }[] }>();
  const outside: { at: number; id: string; node: HTMLElement }[] = [];
  const entry = (at: number, kind: string, text: string, extra?: HTMLElement) =>
    h(
      'li',
      { class: `entry`, 'data-family': family(kind), 'data-kind': kind, 'data-testid': 'timeline-entry' },
      h('time', {}, new Date(at).toLocaleTimeString()),
      h('span', { class: 'kind' }, kind),
      h('span', { class: 'what' }, text),
      extra,
    );
  const place = (turnId: string | undefined, item: { at: number; id: string; node: HTMLElement }) => {
    if (!turnId) return outside.push(item);
    const t = turns.get(turnId) ?? { started: item.at, items: [] };
    t.started = Math.min(t.started, item.at);
    t.items.push(item);
    turns.set(turnId, t);
  };
  for (const e of events) {
    const turnId = (e.data.turnId as string | undefined) ?? undefined;
    // A turn's start is not a record of its own: turn.ended carries it.
    if (e.type === 'turn.ended' && typeof e.data.startedAt === 'number')
      place(turnId, { at: e.data.startedAt, id: '', node: entry(e.data.startedAt, 'turn.started', 'turn started') });
    place(turnId, { at: e.at, id: e.id, node: entry(e.at, e.type, describe(e)) });
  }
  for (const c of calls) {
    const detail = h(
      'span',
      { class: 'llm' },
      `${c.model} · ${fmtMs(c.durationMs)} · ${c.promptTokens}+${c.completionTokens} tokens${c.toolCalls.length ? ` · tools: ${c.toolCalls.join(', ')}` : ''}${c.ok ? '' : ` · error: ${c.error ?? ''}`}`,
    );
    place(c.turnId, { at: c.at, id: c.id, node: entry(c.at, `llm #${c.sequence}`, c.purpose, detail) });
  }
  const head = h('div', { class: 'timeline-head' }, h('h2', {}, `Timeline — ${conversationId}`), exportButton(conversationId));
  const root = h('div', { 'data-testid': 'timeline', class: 'timeline' }, head);
  const sorted = [...turns.entries()].sort((a, b) => a[1].started - b[1].started);
  for (const [turnId, t] of sorted) {
    const list = h('ol', {});
    for (const i of t.items.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1))) list.append(i.node);
    root.append(h('section', { class: 'turn' }, h('h3', {}, `Turn ${turnId.split(':').pop()} · ${fmtTime(t.started)}`), list));
  }
  if (outside.length) {
    const list = h('ol', {});
    for (const i of outside.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1))) list.append(i.node);
    root.append(h('section', { class: 'turn' }, h('h3', {}, 'Outside turns (proactive, reviews, delivery)'), list));
  }
  if (!events.length && !calls.length) root.append(h('p', {}, 'No records for this conversation.'));
  container.replaceChildren(root);
}
