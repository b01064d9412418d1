// The right side: one conversation, whole — its header with the actions (claim, assign, release, resolve), the
// transcript (messages, the assistant's tool calls and confirmations, handoffs, internal notes) and the customer panel.
// The composer (composer.ts) is kept across redraws so a half-written reply is never lost.
import type { AgentPresence, ConversationWhole, TranscriptEntry } from './api.ts';
import { fmtDay, fmtTime, h, json, webHref } from './dom.ts';
import { customerName } from './list.ts';

export interface Actions {
  claim(): void;
  /** A conversation with the assistant (or resolved): hand it to a person now, and claim it. */
  takeOver(): void;
  release(): void;
  resolve(): void;
  assign(agentId: string): void;
  /** Copies the conversation's link (/inbox#conversation=<id>) and announces it. */
  copyLink(): void;
}

/** What the assistant's reply cited: numbered titles, linked (in a new tab) when the source has a web address. */
function sourcesNode(sources: NonNullable<Extract<TranscriptEntry, { kind: 'assistant' }>['sources']>): HTMLElement {
  const list = h('ol', {});
  for (const s of sources) {
    const href = webHref(s.url);
    const title = href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, s.title) : s.title;
    list.append(h('li', { value: String(s.n), 'data-testid': 'source' }, title));
  }
  return h('div', { class: 'sources', 'data-testid': 'sources' }, h('p', {}, 'Sources'), list);
}

function entryNode(e: TranscriptEntry): HTMLElement {
  const time = h('time', { datetime: new Date(e.at).toISOString() }, fmtTime(e.at));
  switch (e.kind) {
    case 'customer':
      return h('li', { class: 'msg customer', 'data-kind': 'customer' }, h('span', { class: 'by' }, 'Customer', time), h('p', {}, e.text));
    case 'assistant':
      return h(
        'li',
        { class: 'msg assistant', 'data-kind': 'assistant' },
        h('span', { class: 'by' }, e.proactive ? 'Assistant (proactive)' : 'Assistant', time),
        h('p', {}, e.text),
        e.sources?.length ? sourcesNode(e.sources) : undefined,
      );
    case 'agent':
      return h('li', { class: 'msg agent', 'data-kind': 'agent' }, h('span', { class: 'by' }, e.author.name, time), h('p', {}, e.text));
    case 'note':
      return h('li', { class: 'msg note', 'data-kind': 'note' }, h('span', { class: 'by' }, `Internal note · ${e.author.name}`, time), h('p', {}, e.text));
    case 'tool': {
      const outcome = e.ok === undefined ? 'running' : e.ok ? 'ok' : 'failed';
      const body = h('details', {}, h('summary', {}, 'Arguments and result'), h('h3', {}, 'Arguments'), h('pre', {}, json(e.args)));
      if (e.ok !== undefined) body.append(h('h3', {}, e.ok ? 'Result' : 'Error'), h('pre', {}, e.ok ? json(e.result) : (e.error ?? json(e.result))));
      return h(
        'li',
        { class: `act tool ${outcome}`, 'data-kind': 'tool', 'data-testid': 'tool-call' },
        h('span', { class: 'by' }, `Tool call · ${e.name} · ${outcome}${e.durationMs !== undefined ? ` · ${e.durationMs} ms` : ''}`, time),
        h('code', { class: 'args' }, json(e.args).replace(/\s+/g, ' ')),
        body,
      );
    }
    case 'confirmation':
      return h(
        'li',
        { class: `act confirmation ${e.outcome}`, 'data-kind': 'confirmation', 'data-testid': 'confirmation' },
        h(
          'span',
          { class: 'by' },
          e.outcome === 'requested' ? `Asked the customer to confirm${e.name ? ` · ${e.name}` : ''}` : `Confirmation ${e.outcome}`,
          time,
        ),
        e.outcome === 'requested' ? h('p', {}, e.text) : undefined,
        e.receipt ? h('p', { class: e.receipt.ok ? 'receipt ok' : 'receipt failed' }, e.receipt.text) : undefined,
      );
    case 'handoff':
      return h('li', { class: 'act handoff', 'data-kind': 'handoff' }, h('span', { class: 'by' }, handoffText(e), time));
    case 'resolved':
      return h(
        'li',
        { class: 'act resolved', 'data-kind': 'resolved' },
        h('span', { class: 'by' }, `Resolved by ${e.by.name}${e.released ? ': back to the assistant' : ''}`, time),
      );
  }
}

/**
 * What a handoff record says: handed over, back to the assistant, nobody free yet (the customer was told), resolved (a
 * resolve whose agent cannot be read: the transcript shows a readable one as its own entry), joined.
 */
function handoffText(e: Extract<TranscriptEntry, { kind: 'handoff' }>): string {
  switch (e.phase) {
    case 'requested':
      return `Handed to a person${e.reason ? `: ${e.reason}` : ''}`;
    case 'released':
      return `Back to the assistant${e.by === 'agent' ? ': an agent released it' : e.by === 'idle' ? ': nobody wrote for a while' : ''}`;
    case 'offline':
      return 'No one has answered yet: the customer was told the team will reply here';
    case 'resolved':
      return 'Resolved';
    default:
      return `${e.agent ?? 'An agent'} joined`;
  }
}

export function renderTranscript(w: ConversationWhole): HTMLElement {
  const ol = h('ol', { class: 'transcript', 'data-testid': 'transcript', 'aria-label': 'Conversation', tabindex: '0' });
  for (const e of w.transcript) ol.append(entryNode(e));
  return ol;
}

/** Why the agent may only write notes here (a reply needs a handoff, and its holder or an admin), or undefined. */
export function notesOnlyWhy(i: ConversationWhole['item'], me: { agentId: string; role: string }): string | undefined {
  if (!i.handoff) return i.resolvedAt ? 'Resolved: Take over to reply' : 'With the assistant: Take over to reply';
  if (i.holder && i.holder.agentId !== me.agentId && me.role !== 'admin') return `${i.holder.name} has this conversation: only internal notes`;
  return undefined;
}

/** An agent in the Assign list: the name and presence ("unknown" while the live feed is down). */
export const assignLabel = (ag: { name: string; presence: string }) => `${ag.name} (${ag.presence})`;

type ShownAgent = Omit<AgentPresence, 'presence'> & { presence: string };

export function renderHeader(w: ConversationWhole, me: { agentId: string; role: string }, agents: ShownAgent[], a: Actions): HTMLElement {
  const i = w.item;
  const mine = i.holder?.agentId === me.agentId;
  // Someone else's: Claim stays (it answers who has it), the rest is the holder's or an admin's.
  const mayAct = !i.holder || mine || me.role === 'admin';
  const buttons = h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' });
  if (!i.handoff) {
    const take = h(
      'button',
      { type: 'button', class: 'primary', 'data-testid': 'take-over', title: 'Hand the conversation to you: the assistant stops answering' },
      'Take over',
    );
    take.addEventListener('click', a.takeOver);
    buttons.append(take);
  }
  if (i.handoff && !mine) {
    const claim = h('button', { type: 'button', class: 'primary', 'data-testid': 'claim' }, 'Claim');
    claim.addEventListener('click', a.claim);
    buttons.append(claim);
  }
  if (i.handoff && mayAct) {
    const select = h('select', { id: 'assign', 'data-testid': 'assign' }, h('option', { value: '' }, 'Assign to…'));
    for (const ag of agents) if (ag.agentId !== i.holder?.agentId) select.append(h('option', { value: ag.agentId }, assignLabel(ag)));
    select.addEventListener('change', () => select.value && a.assign(select.value));
    const release = h('button', { type: 'button', 'data-testid': 'release', title: 'Give the conversation back to the assistant' }, 'Release');
    release.addEventListener('click', a.release);
    buttons.append(h('label', { for: 'assign', class: 'sr' }, 'Assign to another agent'), select, release);
  }
  if (!i.resolvedAt && mayAct) {
    const resolve = h('button', { type: 'button', 'data-testid': 'resolve', title: 'Resolve (e)' }, 'Resolve');
    resolve.addEventListener('click', a.resolve);
    buttons.append(resolve);
  }
  const copy = h(
    'button',
    { type: 'button', 'data-testid': 'copy-link', title: 'Copy the address of this conversation, to share it with the team' },
    'Copy link',
  );
  copy.addEventListener('click', a.copyLink);
  buttons.append(copy);
  const holder = i.holder
    ? `With ${i.holder.name}`
    : i.handoff
      ? 'Waiting for a person'
      : i.resolvedAt
        ? `Resolved ${fmtDay(i.resolvedAt)}`
        : 'With the assistant';
  return h(
    'header',
    { class: 'conv-head' },
    h(
      'div',
      {},
      h('h2', { 'data-testid': 'conversation-title', title: customerName(i) }, customerName(i)),
      h('p', { class: 'holder', 'data-testid': 'holder' }, `${i.channel === 'web' ? 'Web' : 'WhatsApp'} · ${holder}`),
    ),
    buttons,
  );
}

export function renderCustomer(w: ConversationWhole, open: (id: string) => void): HTMLElement {
  const c = w.customer;
  const dl = h('dl', {});
  const add = (k: string, v: string | undefined) => v && dl.append(h('dt', {}, k), h('dd', {}, v));
  add('Email', c.email);
  add('Phone', c.phone);
  add('External id', c.externalId);
  add('Identity', c.verified ? 'Verified' : 'Not verified');
  add('Channels', c.channels.map((ch) => (ch === 'web' ? 'Web' : 'WhatsApp')).join(', '));
  const others = h('ul', { class: 'others' });
  for (const o of c.others) {
    const b = h(
      'button',
      { type: 'button', class: 'link' },
      `${o.channel === 'web' ? 'Web' : 'WhatsApp'} · ${o.state}${o.lastMessageAt ? ` · ${fmtDay(o.lastMessageAt)}` : ''}`,
    );
    b.addEventListener('click', () => open(o.conversationId));
    others.append(h('li', {}, b));
  }
  return h(
    'aside',
    { class: 'customer', 'aria-label': 'Customer', 'data-testid': 'customer-panel' },
    h('h3', {}, 'Customer'),
    dl,
    h('h3', {}, 'Other conversations'),
    c.others.length ? others : h('p', { class: 'muted' }, 'None'),
  );
}
