// The telemetry dashboard: asks for the service secret (kept in this tab's
// sessionStorage), then draws charts, a live list of recent conversations and
// a conversation timeline. Everything is served by Parley (works offline).
import uplotCss from 'uplot/dist/uPlot.min.css';
import { api, secret, Unauthorized, type ConversationRow, type Summary } from './api.ts';
import { chartKey, chartSpecs, renderChart, updateChart } from './charts.ts';
import { fmtAgo, fmtMs, fmtTime, h } from './dom.ts';
import { renderDeliveries, renderWithHuman, type Deliveries } from './operations.ts';
import type { ConversationList } from '../../sdk/src/agent-api.ts';
import { STYLES } from './styles.ts';
import { renderTimeline } from './timeline.ts';

const REFRESH_MS = 5000;

/** The time windows the header offers, with a bucket size that gives each chart 48–60 points. */
export const WINDOWS = [
  { id: '1h', label: '1 h', spanMs: 3600_000, bucketMs: 60_000 },
  { id: '24h', label: '24 h', spanMs: 24 * 3600_000, bucketMs: 30 * 60_000 },
  { id: '7d', label: '7 d', spanMs: 7 * 24 * 3600_000, bucketMs: 3 * 3600_000 },
] as const;
type WindowId = (typeof WINDOWS)[number]['id'];
const WINDOW_KEY = 'parley.window';
const savedWindow = (): WindowId => (WINDOWS.find((w) => w.id === sessionStorage.getItem(WINDOW_KEY))?.id ?? '24h') as WindowId;

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
  let windowId = savedWindow();
  const picker = h('div', { class: 'window-picker', role: 'group', 'aria-label': 'Time window', 'data-testid': 'window-picker' });
  for (const w of WINDOWS) {
    const b = h('button', { type: 'button', 'data-window': w.id, 'aria-pressed': String(w.id === windowId) }, w.label);
    b.addEventListener('click', () => {
      windowId = w.id;
      sessionStorage.setItem(WINDOW_KEY, w.id);
      picker.querySelectorAll('button').forEach((x) => x.setAttribute('aria-pressed', String(x === b)));
      if (timer) clearTimeout(timer);
      void refresh();
    });
    picker.append(b);
  }
  const kpis = h('div', { class: 'kpis' });
  const charts = h('div', { class: 'charts' });
  const rows = h('tbody', {});
  const list = h(
    'section',
    { class: 'card', 'aria-label': 'Recent conversations' },
    h('h3', {}, 'Recent conversations (live)'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { 'data-testid': 'conversations' },
        h(
          'thead',
          {},
          h('tr', {}, h('th', {}, 'Conversation'), h('th', {}, 'Channel'), h('th', {}, 'State'), h('th', {}, 'Last message'), h('th', {}, 'Review')),
        ),
        rows,
      ),
    ),
  );
  const timeline = h('section', { class: 'card', 'aria-live': 'polite' }, h('p', { class: 'empty' }, 'Click a conversation to read its timeline.'));
  const withHuman = h('section', { class: 'card', 'aria-label': 'Conversations with a person', 'data-testid': 'with-human-card' });
  const deliveries = h('section', { class: 'card', 'aria-label': 'Webhook deliveries', 'data-testid': 'webhooks-card' });
  const updated = h('span', {}, '');
  app.replaceChildren(
    h('header', {}, h('h1', {}, 'Parley telemetry'), picker, updated, signOut),
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
      const w = WINDOWS.find((x) => x.id === windowId)!;
      const [summary, convs, handedOver, hooks] = await Promise.all([
        api<Summary>(`/api/v1/telemetry/summary?since=${now - w.spanMs}&until=${now}&bucketMs=${w.bucketMs}`),
        api<{ items: ConversationRow[] }>('/api/v1/telemetry/conversations?limit=50'),
        api<ConversationList>('/conversations?state=withHuman&limit=50'),
        api<Deliveries>('/api/v1/webhooks/deliveries?limit=50'),
      ]);
      if (stopped) return;
      renderWithHuman(withHuman, handedOver, now);
      renderDeliveries(deliveries, hooks, now);
      const p95s = summary.llm.p95.filter((v): v is number => v !== null);
      kpis.replaceChildren(
        kpi(`Conversations (${w.label})`, String(summary.totals.conversations)),
        kpi('Messages in / out', `${summary.totals.messagesIn} / ${summary.totals.messagesOut}`),
        kpi('Turns', String(summary.totals.turns)),
        kpi('LLM calls', String(summary.totals.turnCalls)),
        kpi('Worst p95 LLM latency', fmtMs(p95s.length ? Math.max(...p95s) : null)),
        kpi('Tool failures', String(summary.toolFailures.reduce((a, b) => a + b, 0))),
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
            h('td', { title: c.conversationId }, c.externalId ?? c.customerId),
            h('td', {}, c.channel),
            h('td', {}, c.state),
            c.lastMessageAt ? h('td', { title: fmtTime(c.lastMessageAt) }, fmtAgo(c.lastMessageAt, now)) : h('td', {}, '–'),
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
