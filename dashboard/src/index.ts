// The telemetry dashboard: asks for the service secret (kept in this tab's
// sessionStorage), then draws charts, a live list of recent conversations and
// a conversation timeline. Everything is served by Parley (works offline).
import uplotCss from 'uplot/dist/uPlot.min.css';
import { api, secret, Unauthorized, type ConversationRow, type Summary } from './api.ts';
import { chartKey, chartSpecs, renderChart, updateChart } from './charts.ts';
import { fmtAgo, fmtMs, fmtTime, h } from './dom.ts';
import { createFilters } from './filters.ts';
import { renderDeliveries, renderWithHuman, type Deliveries } from './operations.ts';
import type { ConversationList } from '../../sdk/src/agent-api.ts';
import { STYLES } from './styles.ts';
import { renderTimeline } from './timeline.ts';

const REFRESH_MS = 5000;

function installStyles() {
  const style = document.createElement('style');
  style.textContent = `${uplotCss}\n${STYLES}`;
  document.head.append(style);
}

function loginView(app: HTMLElement, message?: string) {
  const input = h('input', {
    type: 'password',
    id: 'secret',
    'data-testid': 'secret-input',
    autocomplete: 'off',
    required: '',
    'aria-describedby': 'secret-help',
  });
  const form = h(
    'form',
    { class: 'login card', 'data-testid': 'secret-form' },
    h('h2', {}, 'Parley telemetry'),
    h('label', { for: 'secret' }, 'Service secret'),
    input,
    h('small', { id: 'secret-help' }, 'Kept in this tab only (sessionStorage). The same secret your backend uses for the SDK.'),
    message ? h('p', { class: 'error', role: 'alert' }, message) : undefined,
    h('button', { type: 'submit' }, 'Open dashboard'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    secret.set(input.value.trim());
    void dashboardView(app);
  });
  app.replaceChildren(form);
  input.focus();
}

/** The last message's text (with `telemetry.store_text`) and when; otherwise only when. */
function lastMessageCell(c: ConversationRow, now: number) {
  if (!c.lastMessageAt) return h('td', {}, '–');
  const ago = fmtAgo(c.lastMessageAt, now);
  if (!c.lastMessage) return h('td', { title: fmtTime(c.lastMessageAt) }, ago);
  const who = c.lastMessage.from === 'customer' ? '' : `${c.lastMessage.from}: `;
  return h('td', { class: 'last-message', title: `${fmtTime(c.lastMessage.at)} — ${c.lastMessage.text}` }, `${who}${c.lastMessage.text}`, h('small', {}, ago));
}

const fmtCost = (v: number) => (v === 0 ? '0' : v < 0.01 ? v.toFixed(4) : v.toFixed(2));

function kpi(label: string, value: string) {
  return h('div', { class: 'card kpi' }, h('div', { class: 'value' }, value), h('div', { class: 'label' }, label));
}

async function dashboardView(app: HTMLElement) {
  const signOut = h('button', { type: 'button' }, 'Sign out');
  signOut.addEventListener('click', () => {
    secret.clear();
    stop();
    loginView(app);
  });
  const filters = createFilters(() => {
    if (timer) clearTimeout(timer);
    void refresh();
  });
  const kpis = h('div', { class: 'kpis' });
  const charts = h('div', { class: 'charts' });
  const rows = h('tbody', {});
  const list = h(
    'section',
    { class: 'card', 'aria-label': 'Recent conversations' },
    h('h2', {}, 'Recent conversations (live)'),
    h(
      'div',
      { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Recent conversations (scrolls)' },
      h(
        'table',
        { 'data-testid': 'conversations' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Customer'), h('th', {}, 'Channel'), h('th', {}, 'State'), h('th', {}, 'Last message'), h('th', {}, 'Review'))),
        rows,
      ),
    ),
  );
  const timeline = h('section', { class: 'card', 'aria-live': 'polite' }, h('p', { class: 'empty' }, 'Click a conversation to read its timeline.'));
  const withHuman = h('section', { class: 'card', 'aria-label': 'Conversations with a person', 'data-testid': 'with-human-card' });
  const deliveries = h('section', { class: 'card', 'aria-label': 'Webhook deliveries', 'data-testid': 'webhooks-card' });
  const updated = h('span', {}, '');
  app.replaceChildren(
    h('header', {}, h('h1', {}, 'Parley telemetry'), filters.root, updated, signOut),
    h('main', {}, kpis, charts, h('div', { class: 'split' }, list, timeline), h('div', { class: 'split operations' }, withHuman, deliveries)),
  );
  let selected: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };

  const refresh = async () => {
    try {
      const now = Date.now();
      const q = filters.query(now);
      const [summary, convs, handedOver, hooks] = await Promise.all([
        api<Summary & { currency: string }>(`/api/v1/telemetry/summary?${q.summary}`),
        api<{ items: ConversationRow[] }>(`/api/v1/telemetry/conversations?limit=50${q.channel}`),
        api<ConversationList>('/conversations?state=withHuman&limit=50'),
        api<Deliveries>('/api/v1/webhooks/deliveries?limit=50'),
      ]);
      if (stopped) return;
      renderWithHuman(withHuman, handedOver, now);
      renderDeliveries(deliveries, hooks, now);
      const p95s = summary.llm.p95.filter((v): v is number => v !== null);
      kpis.replaceChildren(
        kpi(`Conversations (${filters.label()})`, String(summary.totals.conversations)),
        kpi('Messages in / out', `${summary.totals.messagesIn} / ${summary.totals.messagesOut}`),
        kpi('Turns', String(summary.totals.turns)),
        kpi('LLM calls', String(summary.totals.turnCalls)),
        kpi('Worst p95 LLM latency', fmtMs(p95s.length ? Math.max(...p95s) : null)),
        kpi('Tool failures', String(summary.toolFailures.reduce((a, b) => a + b, 0))),
        kpi(`Cost (${summary.currency})`, fmtCost(summary.cost.total)),
      );
      // Same charts as drawn: new data in place (no flicker, the cursor and size stay); otherwise draw them anew.
      const specs = chartSpecs(summary);
      const drawn = [...charts.children] as HTMLElement[];
      if (drawn.length === specs.length && specs.every((c, i) => drawn[i].getAttribute('data-key') === chartKey(c))) {
        specs.forEach((c, i) => updateChart(drawn[i], c));
      } else {
        drawn.forEach((c) => c.dispatchEvent(new Event('parley:destroy')));
        charts.replaceChildren(...specs.map(renderChart));
      }
      rows.replaceChildren(
        ...convs.items.map((c) => {
          const tr = h(
            'tr',
            { 'data-testid': 'conversation-row', tabindex: '0', 'aria-selected': String(c.conversationId === selected) },
            h('td', { title: c.conversationId }, c.customer?.email ?? c.customer?.phone ?? c.externalId ?? c.customerId),
            h('td', {}, c.channel),
            h('td', {}, c.state),
            lastMessageCell(c, now),
            h('td', { class: c.reflection ? `verdict-${c.reflection.verdict}` : '' }, c.reflection?.verdict ?? ''),
          );
          const open = () => {
            selected = c.conversationId;
            rows.querySelectorAll('tr').forEach((r) => r.setAttribute('aria-selected', String(r === tr)));
            void renderTimeline(timeline, c.conversationId).catch((err) => timeline.replaceChildren(h('p', { class: 'error' }, String(err.message))));
          };
          tr.addEventListener('click', open);
          tr.addEventListener('keydown', (e) => e.key === 'Enter' && open());
          return tr;
        }),
      );
      if (convs.items.length === 0) rows.replaceChildren(h('tr', {}, h('td', { colspan: '5', class: 'empty' }, 'No conversations yet.')));
      updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      if (err instanceof Unauthorized) {
        stop();
        secret.clear();
        return loginView(app, err.message);
      }
      updated.textContent = `refresh failed: ${(err as Error).message}`;
    }
    if (!stopped) timer = setTimeout(() => void refresh(), REFRESH_MS);
  };
  await refresh();
}

installStyles();
const app = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
if (secret.get()) void dashboardView(app);
else loginView(app);
