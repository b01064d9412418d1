// The dashboard's backend health and errors (issue 39 part 4): whether an SDK is connected and how many functions it
// offers (`/ready`), SDK disconnects, function failures and timeouts in the window (telemetry), and the latest errors
// with their codes, each linking to its conversation's timeline.
import { allPages, api, type EventRecord } from './api.ts';
import { fmtTime, h } from './dom.ts';

interface Ready {
  status: string;
  checks: { sdk: { connected: boolean; functions: number }; llm: string; database: string };
}

const MAX_ERRORS = 30;

/** An error's code: the code it carries, else where it happened. */
export function errorCode(e: EventRecord): string {
  const d = e.data as { code?: unknown; where?: unknown; error?: unknown };
  if (typeof d.code === 'string') return d.code;
  if (e.type === 'tool.failed') return /timeout|did not answer in time/i.test(String(d.error ?? '')) ? 'timeout' : 'tool_failed';
  return typeof d.where === 'string' ? d.where : e.type;
}

function tile(label: string, value: string, testid: string, tone?: 'good' | 'bad') {
  return h(
    'div',
    Object.assign({ class: 'card kpi', 'data-testid': testid }, tone ? { 'data-tone': tone } : {}) as Record<string, string>,
    // A word ("Not connected") is set smaller than a figure, so it fits a tile six to a row.
    h('div', { class: /^[\d.,+ %]+$/.test(value) ? 'value' : 'value word' }, value),
    h('div', { class: 'label' }, label),
  );
}

export function createHealthPanel(openConversation: (conversationId: string) => void) {
  const tiles = h('div', { class: 'kpis', 'data-testid': 'health-tiles' });
  const errors = h('ol', { class: 'errors', 'data-testid': 'errors' });
  const root = h(
    'section',
    { class: 'health', 'aria-label': 'Backend health and errors', 'data-testid': 'health-panel' },
    h('h2', { class: 'section-title' }, 'Backend health and errors'),
    tiles,
    h('div', { class: 'card' }, h('h3', {}, 'Latest errors'), errors),
  );

  const refresh = async (range: { since: number; until: number }) => {
    const window = `since=${range.since}&until=${range.until}`;
    const [ready, closed, failed, errs] = await Promise.all([
      fetch('/ready').then((r) => r.json() as Promise<Ready>),
      allPages<EventRecord>(`/api/v1/telemetry/events?type=sdk.closed&${window}`, 2000),
      allPages<EventRecord>(`/api/v1/telemetry/events?type=tool.failed&${window}`, 2000),
      api<{ items: EventRecord[] }>(`/api/v1/telemetry/events?type=error&${window}&order=desc&limit=${MAX_ERRORS}`),
    ]);
    const timeouts = failed.filter((e) => errorCode(e) === 'timeout').length;
    const sdk = ready.checks.sdk;
    tiles.replaceChildren(
      tile('Backend (SDK)', sdk.connected ? 'Connected' : 'Not connected', 'tile-sdk', sdk.connected ? 'good' : 'bad'),
      tile('Functions offered', String(sdk.functions), 'tile-functions'),
      tile('SDK disconnects', String(closed.length), 'tile-disconnects'),
      tile('Function failures', String(failed.length - timeouts), 'tile-invoke-failures'),
      tile('Function timeouts', String(timeouts), 'tile-invoke-timeouts'),
      // Every error the list below shows (errors and function failures), so the figure and the list agree.
      tile('Errors', `${errs.items.length + failed.length}${errs.items.length === MAX_ERRORS ? '+' : ''}`, 'tile-errors'),
    );
    const latest = [...errs.items, ...failed.slice(-MAX_ERRORS)].sort((a, b) => b.at - a.at).slice(0, MAX_ERRORS);
    errors.replaceChildren(
      ...latest.map((e) => {
        const message = String((e.data as { message?: unknown; error?: unknown }).message ?? (e.data as { error?: unknown }).error ?? '');
        const link = e.conversationId
          ? h('button', { type: 'button', class: 'link', 'data-testid': 'error-conversation', 'data-conversation': e.conversationId }, e.conversationId)
          : h('span', { class: 'muted' }, 'no conversation');
        link.addEventListener('click', () => e.conversationId && openConversation(e.conversationId));
        return h(
          'li',
          { 'data-testid': 'error-row' },
          h('time', {}, fmtTime(e.at)),
          h('code', { class: 'code' }, errorCode(e)),
          h('span', { class: 'what' }, message),
          link,
        );
      }),
    );
    if (latest.length === 0) errors.replaceChildren(h('li', { class: 'empty' }, 'No errors in this window.'));
  };
  return { root, refresh };
}
