// The dashboard's outcomes (issue 39, docs/outcomes.md): tiles for the resolution and handoff rates, first-response
// and resolution times, reopens, CSAT and the estimated experience; handoffs by reason as bars (each count on its own
// scale of the largest); the conversations with their outcome, filtered by outcome and customer beside the header's
// window and channel; and the CSV export of that list.
import type { OutcomeRow } from '../../src/outcomes/csv.ts';
import type { OutcomeSummary } from '../../src/outcomes/summary.ts';
import { api, secret } from './api.ts';
import { fmtAgo, fmtDuration, fmtTime, h, inboxLink } from './dom.ts';

export interface OutcomesRange {
  since: number;
  until: number;
  channel: '' | 'web' | 'whatsapp';
}

interface OutcomesResponse {
  summary: OutcomeSummary;
  items: OutcomeRow[];
}

const OUTCOME_LABELS: Record<string, string> = {
  open: 'Open',
  resolved_confirmed: 'Resolved, confirmed',
  resolved_assumed: 'Resolved, assumed',
  handed_over: 'Handed over',
  abandoned: 'Abandoned',
  unresolved: 'Unresolved',
};
const REASON_LABELS: Record<string, string> = {
  customer_asked: 'Customer asked',
  missing_knowledge: 'Missing knowledge',
  unsupported_request: 'Unsupported request',
  tool_failure: 'Tool failure',
  policy: 'Policy',
  other: 'Other',
};

const pct = (v: number | null) => (v === null ? '–' : `${Math.round(v * 1000) / 10} %`);

function tile(label: string, value: string, note?: string, testid?: string) {
  return h(
    'div',
    Object.assign({ class: 'card kpi' }, testid ? { 'data-testid': testid } : {}) as Record<string, string>,
    h('div', { class: 'value' }, value),
    h('div', { class: 'label' }, label),
    note ? h('div', { class: 'note' }, note) : undefined,
  );
}

/** Horizontal bars, each relative to the largest count of its own list. */
function bars(entries: [string, number][], testid: string) {
  const max = Math.max(1, ...entries.map(([, n]) => n));
  return h(
    'div',
    { class: 'bars', 'data-testid': testid },
    ...entries.map(([label, n]) => {
      // Set through the CSSOM (the page's CSP allows no style attributes).
      const fill = h('div', { class: 'bar-fill' });
      fill.style.width = `${(n / max) * 100}%`;
      return h(
        'div',
        { class: 'bar' },
        h('span', { class: 'bar-label' }, label),
        h('div', { class: 'bar-track', 'aria-hidden': 'true' }, fill),
        h('span', { class: 'bar-value' }, String(n)),
      );
    }),
  );
}

function row(r: OutcomeRow, now: number) {
  const who = r.customer?.email ?? r.customer?.phone ?? r.externalId ?? r.customerId;
  const last = r.lastMessage ? `${r.lastMessage.from === 'customer' ? '' : `${r.lastMessage.from}: `}${r.lastMessage.text}` : '';
  return h(
    'tr',
    { 'data-testid': 'outcome-row', 'data-outcome': r.status },
    h('td', {}, inboxLink(r.conversationId, who)),
    h('td', {}, r.channel),
    h('td', { class: `outcome-${r.status}` }, OUTCOME_LABELS[r.status] ?? r.status),
    h('td', {}, r.status === 'handed_over' && r.reason ? (REASON_LABELS[r.reason] ?? r.reason) : ''),
    h('td', {}, r.csat ? `${r.csat.score}/5` : ''),
    h('td', { class: 'last-message', title: fmtTime(r.lastAt) }, last, h('small', {}, fmtAgo(r.lastAt, now))),
  );
}

async function downloadCsv(path: string) {
  const s = secret.get();
  const res = await fetch(path, { headers: s ? { authorization: `Bearer ${s}` } : {} });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  const url = URL.createObjectURL(await res.blob());
  const a = h('a', { href: url, download: 'parley-conversations.csv' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function createOutcomesPanel() {
  const tiles = h('div', { class: 'kpis', 'data-testid': 'outcome-tiles' });
  const reasons = h('div', {});
  const outcomes = h('div', {});
  const outcome = h(
    'select',
    { id: 'outcome-filter', 'data-testid': 'outcome-filter' },
    h('option', { value: '' }, 'All outcomes'),
    ...Object.entries(OUTCOME_LABELS).map(([v, label]) => h('option', { value: v }, label)),
  );
  const customer = h('input', { id: 'customer-filter', type: 'search', 'data-testid': 'customer-filter', placeholder: 'id, external id or email' });
  const exportButton = h('button', { type: 'button', 'data-testid': 'export-csv' }, 'Export CSV');
  const status = h('span', { class: 'export-status', role: 'status' }, '');
  const rows = h('tbody', {});
  const root = h(
    'section',
    { class: 'outcomes', 'aria-label': 'Outcomes', 'data-testid': 'outcomes-panel' },
    h('h2', { class: 'section-title' }, 'Outcomes'),
    tiles,
    h(
      'div',
      { class: 'split even' },
      h('div', { class: 'card' }, h('h3', {}, 'Handoffs by reason'), reasons),
      h('div', { class: 'card' }, h('h3', {}, 'Conversations by outcome'), outcomes),
    ),
    h(
      'div',
      { class: 'card outcome-list' },
      h(
        'div',
        { class: 'list-head' },
        h('h3', {}, 'Conversations and their outcomes'),
        h('label', { for: 'outcome-filter' }, 'Outcome'),
        outcome,
        h('label', { for: 'customer-filter' }, 'Customer'),
        customer,
        exportButton,
        status,
      ),
      h(
        'div',
        { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Conversations and their outcomes (scrolls)' },
        h(
          'table',
          { 'data-testid': 'outcome-conversations' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'Customer'),
              h('th', {}, 'Channel'),
              h('th', {}, 'Outcome'),
              h('th', {}, 'Reason'),
              h('th', {}, 'CSAT'),
              h('th', {}, 'Last message'),
            ),
          ),
          rows,
        ),
      ),
    ),
  );

  let range: OutcomesRange | undefined;
  const query = (r: OutcomesRange) => {
    const q = new URLSearchParams({ since: String(r.since), until: String(r.until) });
    if (r.channel) q.set('channel', r.channel);
    if (outcome.value) q.set('outcome', outcome.value);
    if (customer.value.trim()) q.set('customer', customer.value.trim());
    return q.toString();
  };

  const refresh = async (r: OutcomesRange) => {
    range = r;
    const now = Date.now();
    const data = await api<OutcomesResponse>(`/api/v1/telemetry/outcomes?${query(r)}&limit=200`);
    const s = data.summary;
    tiles.replaceChildren(
      tile(
        'Resolved by the assistant',
        pct(s.resolutionRate),
        `${s.byOutcome.resolved_confirmed + s.byOutcome.resolved_assumed} of ${s.decided} decided`,
        'tile-resolution',
      ),
      tile('Confirmed by the customer', pct(s.confirmedRate), undefined, 'tile-confirmed'),
      tile('Handoff rate', pct(s.handoffRate), `${s.byOutcome.handed_over} handed over`, 'tile-handoff'),
      tile('Reopened', String(s.reopens), undefined, 'tile-reopens'),
      tile('First response (median)', fmtDuration(s.firstResponse.medianMs), `p90 ${fmtDuration(s.firstResponse.p90Ms)}`, 'tile-first-response'),
      tile('Resolution time (median)', fmtDuration(s.resolution.medianMs), `p90 ${fmtDuration(s.resolution.p90Ms)}`, 'tile-resolution-time'),
      tile('CSAT', s.csat.average === null ? '–' : `${s.csat.average} / 5`, `${s.csat.count} rating${s.csat.count === 1 ? '' : 's'}`, 'tile-csat'),
      tile(
        'Experience (estimated)',
        s.experience.average === null ? '–' : `${s.experience.average} / 5`,
        `${s.experience.count} scored by a model`,
        'tile-experience',
      ),
    );
    reasons.replaceChildren(
      bars(
        Object.entries(s.handoffsByReason).map(([k, n]) => [REASON_LABELS[k] ?? k, n]),
        'handoff-reasons',
      ),
    );
    outcomes.replaceChildren(
      bars(
        Object.entries(s.byOutcome).map(([k, n]) => [OUTCOME_LABELS[k] ?? k, n]),
        'outcome-counts',
      ),
    );
    rows.replaceChildren(...data.items.map((x) => row(x, now)));
    if (data.items.length === 0) rows.replaceChildren(h('tr', {}, h('td', { colspan: '6', class: 'empty' }, 'No conversations match.')));
  };

  const again = () => {
    if (range) void refresh(range).catch((err) => (status.textContent = String((err as Error).message)));
  };
  outcome.addEventListener('change', again);
  customer.addEventListener('change', again);
  exportButton.addEventListener('click', () => {
    if (!range) return;
    status.textContent = 'Exporting…';
    void downloadCsv(`/api/v1/telemetry/outcomes.csv?${query(range)}`)
      .then(() => (status.textContent = 'Exported.'))
      .catch((err) => (status.textContent = String((err as Error).message)));
  });
  return { root, refresh };
}
