// The left side: the views with their counts, the search, and the list of conversations (a live wait timer on those
// waiting for a person, highlighted past the SLA; unread counts).
import type { InboxItem, InboxList } from './api.ts';
import { fmtDay, fmtWait, h } from './dom.ts';

export type View = InboxList['view'];
export const VIEWS: { view: View; label: string }[] = [
  { view: 'waiting', label: 'Waiting for a person' },
  { view: 'mine', label: 'Mine' },
  { view: 'open', label: 'All open' },
  { view: 'resolved', label: 'Resolved' },
];

export const customerName = (i: Pick<InboxItem, 'customer'>) => i.customer.email ?? i.customer.phone ?? i.customer.externalId;

export function renderNav(list: InboxList | undefined, view: View, choose: (v: View) => void): HTMLElement {
  const nav = h('nav', { class: 'views', 'aria-label': 'Views' });
  const ul = h('ul', {});
  for (const v of VIEWS) {
    const count = list ? (v.view === 'resolved' ? undefined : list.counts[v.view]) : undefined;
    const unread = v.view === 'mine' && list && list.unreadMine > 0 ? list.unreadMine : undefined;
    const b = h(
      'button',
      { type: 'button', class: 'view', 'data-view': v.view, 'data-testid': `view-${v.view}`, 'aria-current': v.view === view ? 'page' : undefined },
      h('span', { class: 'label' }, v.label),
      count !== undefined ? h('span', { class: 'count', 'data-testid': `count-${v.view}` }, String(count)) : undefined,
      unread !== undefined ? h('span', { class: 'unread', 'data-testid': 'unread-mine' }, `${unread} unread`) : undefined,
    );
    b.addEventListener('click', () => choose(v.view));
    ul.append(h('li', {}, b));
  }
  nav.append(ul);
  return nav;
}

/** The wait of a conversation nobody holds yet, and whether it is past the SLA. */
export function waitOf(i: InboxItem, now: number, slaMinutes: number): { text: string; late: boolean } | undefined {
  if (!i.handoff || i.holder) return undefined;
  const ms = now - i.handoff.since;
  return { text: fmtWait(ms), late: ms >= slaMinutes * 60_000 };
}

function row(i: InboxItem, selected: boolean, now: number, slaMinutes: number, open: (id: string) => void): HTMLElement {
  const wait = waitOf(i, now, slaMinutes);
  const status = i.resolvedAt
    ? `Resolved ${fmtDay(i.resolvedAt)}${i.resolvedBy ? ` by ${i.resolvedBy.name}` : ''}`
    : i.holder
      ? `With ${i.holder.name}`
      : i.handoff
        ? 'Waiting'
        : i.state;
  const b = h(
    'button',
    {
      type: 'button',
      class: `item${wait?.late ? ' late' : ''}`,
      'data-testid': 'conversation-item',
      'data-id': i.conversationId,
      'aria-current': selected ? 'true' : undefined,
    },
    h(
      'span',
      { class: 'line1' },
      h('span', { class: 'who' }, customerName(i)),
      wait
        ? h(
            'span',
            {
              class: 'wait',
              'data-testid': 'wait-timer',
              'data-since': String(i.handoff!.since),
              title: wait.late ? 'Waiting longer than the SLA' : 'Waiting',
            },
            wait.text,
          )
        : undefined,
    ),
    h(
      'span',
      { class: 'meta' },
      h('span', { class: `channel ch-${i.channel}` }, i.channel === 'web' ? 'Web' : 'WhatsApp'),
      h('span', { class: 'status' }, status),
      i.unread > 0 ? h('span', { class: 'unread', 'data-testid': 'item-unread', 'aria-label': `${i.unread} unread` }, String(i.unread)) : undefined,
    ),
    i.preview ? h('span', { class: 'preview' }, i.preview) : i.handoff?.reason ? h('span', { class: 'preview' }, i.handoff.reason) : undefined,
  );
  b.addEventListener('click', () => open(i.conversationId));
  return h('li', {}, b);
}

/** What an empty list says: a search found nobody (in this view), or the view is empty. */
const emptyText = (view: View, q: string) =>
  q ? `No customer matches “${q}” in ${VIEWS.find((v) => v.view === view)?.label ?? view}.` : view === 'waiting' ? 'Nobody is waiting.' : 'Nothing here.';

export function renderList(list: InboxList | undefined, q: string, selected: string | undefined, now: number, open: (id: string) => void): HTMLElement {
  if (!list) return h('p', { class: 'empty' }, 'Loading…');
  if (list.items.length === 0) return h('p', { class: 'empty', 'data-testid': 'empty-list' }, emptyText(list.view, q));
  const ul = h('ul', { class: 'items', 'aria-label': 'Conversations' });
  for (const i of list.items) ul.append(row(i, i.conversationId === selected, now, list.slaMinutes, open));
  return ul;
}

/** Moves every live wait timer on (once a second) without drawing the list again. */
export function tickTimers(root: HTMLElement, now: number, slaMinutes: number) {
  for (const el of root.querySelectorAll<HTMLElement>('[data-testid="wait-timer"]')) {
    const ms = now - Number(el.dataset.since);
    el.textContent = fmtWait(ms);
    const late = ms >= slaMinutes * 60_000;
    el.closest('.item')?.classList.toggle('late', late);
  }
}
