// Two cards for operators: the conversations a person has now (the agent inbox), and outbound webhook deliveries
// (delivered, retrying, dead). Read from `/conversations?state=withHuman` and `/api/v1/webhooks/deliveries`.
import type { ConversationList } from '../../sdk/src/agent-api.ts';
import type { Webhooks } from '../../src/webhooks/delivery.ts';
import { fmtAgo, fmtTime, h, inboxLink } from './dom.ts';

/** "12 s", "3 min", "2 h". */
const fmtIn = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
};

export type Deliveries = Awaited<ReturnType<Webhooks['deliveries']>>;

// The wrap scrolls when the card is narrow: focusable, so a keyboard can scroll it too.
const table = (testId: string, head: string[], rows: HTMLElement[], empty: string) =>
  h(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `${testId.replace(/-/g, ' ')} (scrolls)` },
    h(
      'table',
      { 'data-testid': testId },
      h('thead', {}, h('tr', {}, ...head.map((x) => h('th', {}, x)))),
      h('tbody', {}, ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: String(head.length), class: 'empty' }, empty))])),
    ),
  );

export function renderWithHuman(card: HTMLElement, list: ConversationList, now: number) {
  const rows = list.items.map((c) =>
    h(
      'tr',
      { 'data-testid': 'with-human-row' },
      h('td', {}, inboxLink(c.conversationId, c.externalId ?? c.customerId)),
      h('td', {}, c.channel),
      c.handoff ? h('td', { title: fmtTime(c.handoff.since) }, fmtAgo(c.handoff.since, now)) : h('td', {}, '–'),
      h('td', {}, c.handoff?.agent?.name ?? 'waiting'),
      h('td', {}, c.handoff?.reason ?? (c.handoff?.source === 'model' ? 'asked for a person' : '')),
    ),
  );
  card.replaceChildren(
    h('h2', {}, `With a person (${list.items.length}${list.nextBefore ? '+' : ''})`),
    table('with-human', ['Customer', 'Channel', 'Since', 'Agent', 'Reason'], rows, 'No conversation is with a person.'),
  );
}

export function renderDeliveries(card: HTMLElement, d: Deliveries, now: number) {
  const counts = h(
    'div',
    { class: 'delivery-counts', 'data-testid': 'webhook-counts' },
    ...(
      [
        ['delivered', d.counts.delivered],
        ['retrying', d.counts.retrying],
        ['dead', d.counts.dead],
      ] as const
    ).map(([k, v]) => h('span', { class: `count count-${k}`, 'data-state': k }, `${v} ${k}`)),
  );
  const attempt = (a: Deliveries['recent'][number]) =>
    h(
      'tr',
      { 'data-testid': 'webhook-row', 'data-state': a.outcome },
      h('td', { title: a.eventId }, a.type),
      h('td', { title: a.url }, new URL(a.url).host),
      h('td', {}, String(a.attempt)),
      h('td', {}, String(a.result)),
      h('td', { class: `state-${a.outcome}` }, a.outcome === 'retrying' && a.nextAt ? `retry in ${fmtIn(a.nextAt - now)}` : a.outcome),
      h('td', { title: fmtTime(a.at) }, fmtAgo(a.at, now)),
    );
  const dead = d.dead.map((x) =>
    h(
      'tr',
      { 'data-testid': 'webhook-dead-row', 'data-state': 'dead' },
      h('td', { title: x.eventId }, x.type),
      h('td', { title: x.url }, new URL(x.url).host),
      h('td', {}, String(x.attempts)),
      h('td', {}, x.error),
      h('td', { class: 'state-dead' }, 'dead'),
      h('td', { title: fmtTime(x.failedAt) }, fmtAgo(x.failedAt, now)),
    ),
  );
  card.replaceChildren(
    h('h2', {}, 'Webhook deliveries'),
    d.endpoints.length ? counts : h('p', { class: 'empty' }, 'No webhooks configured (`webhooks` in the config).'),
    table(
      'webhook-deliveries',
      ['Event', 'Endpoint', 'Attempt', 'Answer', 'State', 'When'],
      [...dead, ...d.recent.slice(0, 20).map(attempt)],
      'No deliveries yet.',
    ),
  );
}
