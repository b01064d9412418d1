// The telemetry dashboard: signs a person in (email and password: a session cookie), or takes an operator's service
// secret (kept in this tab's sessionStorage), then draws charts, a live list of recent conversations and a
// conversation timeline. Everything is served by Parley (works offline).
import uplotCss from 'uplot/dist/uPlot.min.css';
import { api, currentPerson, secret, setPassword, signIn, signOut, Unauthorized, type ConversationRow, type SignedIn, type Summary } from './api.ts';
import { chartKey, chartSpecs, renderChart, updateChart } from './charts.ts';
import { fmtAgo, fmtMs, fmtTime, h, stateWords } from './dom.ts';
import { createFilters } from './filters.ts';
import { renderDeliveries, renderWithHuman, type Deliveries } from './operations.ts';
import { createKnowledgeCard } from './knowledge.ts';
import { renderHandoffs } from './handoffs.ts';
import type { HandoffSummary } from '../../src/telemetry/handoff-summary.ts';
import type { ConversationList } from '../../sdk/src/agent-api.ts';
import { STYLES } from './styles.ts';
import { renderTimeline } from './timeline.ts';
import { createOutcomesPanel } from './outcomes-panel.ts';
import { createHealthPanel } from './health-panel.ts';
import { OUTCOME_STYLES } from './outcomes-styles.ts';

const REFRESH_MS = 5000;

function installStyles() {
  const style = document.createElement('style');
  style.textContent = `${uplotCss}\n${STYLES}\n${OUTCOME_STYLES}`;
  document.head.append(style);
}

/** A message above the sign-in button: an error (red, an alert) or a notice such as "your password is set". */
type SignInMessage = { kind: 'error'; text: string } | { kind: 'notice'; content: (Node | string)[] };

function signInForm(app: HTMLElement, message?: SignInMessage) {
  const email = h('input', { type: 'email', id: 'email', 'data-testid': 'email-input', autocomplete: 'username', required: '' });
  const password = h('input', { type: 'password', id: 'password', 'data-testid': 'password-input', autocomplete: 'current-password', required: '' });
  const notice = message?.kind === 'notice' ? h('p', { class: 'notice', role: 'status', 'data-testid': 'sign-in-notice' }, ...message.content) : undefined;
  const alert = h('p', { class: 'error', role: 'alert', 'data-testid': 'sign-in-error' }, message?.kind === 'error' ? message.text : '');
  const form = h(
    'form',
    { class: 'login card', 'data-testid': 'sign-in-form' },
    h('h2', {}, 'Sign in to Parley'),
    notice,
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password'),
    password,
    alert,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void signIn(email.value.trim(), password.value).then((r) => {
      if (r.ok) return dashboardView(app, r.person);
      alert.textContent = r.message;
      notice?.remove();
      password.value = '';
      password.focus();
    });
  });
  return { form, email };
}

const TITLE = 'Parley — telemetry';

/** The page a new account's one-time link opens: choose a password, then sign in. */
function setPasswordView(app: HTMLElement, token: string) {
  const password = h('input', {
    type: 'password',
    id: 'new-password',
    'data-testid': 'new-password-input',
    autocomplete: 'new-password',
    required: '',
    minlength: '10',
  });
  const alert = h('p', { class: 'error', role: 'alert' }, '');
  const form = h(
    'form',
    { class: 'login card', 'data-testid': 'set-password-form' },
    h('h2', {}, 'Choose your password'),
    h('label', { for: 'new-password' }, 'Password (at least 10 characters)'),
    password,
    alert,
    h('button', { type: 'submit' }, 'Set password'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void setPassword(token, password.value).then((r) => {
      if (!r.ok) return void (alert.textContent = r.message);
      history.replaceState(null, '', '/telemetry');
      document.title = TITLE;
      loginView(app, {
        kind: 'notice',
        content: ['Your password is set. Sign in here for the dashboard, or in ', h('a', { href: '/inbox' }, 'the inbox'), ' to answer customers.'],
      });
    });
  });
  app.replaceChildren(form);
  // The tab says what this page is for (it said "telemetry", the dashboard's name, to a new agent).
  document.title = 'Parley — choose your password';
  password.focus();
}

function loginView(app: HTMLElement, message?: SignInMessage) {
  const person = signInForm(app, message);
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
    h('h2', {}, 'Operators: the service secret'),
    h('label', { for: 'secret' }, 'Service secret'),
    input,
    h('small', { id: 'secret-help' }, 'Kept in this tab only (sessionStorage). The same secret your backend uses for the SDK.'),
    h('button', { type: 'submit' }, 'Open dashboard'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    secret.set(input.value.trim());
    void dashboardView(app);
  });
  app.replaceChildren(person.form, form);
  person.email.focus();
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

async function dashboardView(app: HTMLElement, person?: SignedIn) {
  const signOutButton = h('button', { type: 'button', 'data-testid': 'sign-out' }, 'Sign out');
  signOutButton.addEventListener('click', () => {
    secret.clear();
    stop();
    void (person?.csrfToken ? signOut(person.csrfToken) : Promise.resolve()).finally(() => loginView(app));
  });
  const who = person ? h('span', { 'data-testid': 'signed-in-as' }, `${person.agent.name} (${person.agent.role})`) : undefined;
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
  const handoffs = h('section', { class: 'card handoffs', 'aria-label': 'Handoffs', 'data-testid': 'handoffs-card' });
  const deliveries = h('section', { class: 'card', 'aria-label': 'Webhook deliveries', 'data-testid': 'webhooks-card' });
  const knowledge = createKnowledgeCard();
  const updated = h('span', {}, '');
  // Issue 39: outcomes, CSAT, backend health and errors (their own files; an error links to its conversation's timeline).
  const outcomesPanel = createOutcomesPanel();
  const openTimeline = (conversationId: string) =>
    void renderTimeline(timeline, conversationId).catch((err) => timeline.replaceChildren(h('p', { class: 'error' }, String(err.message))));
  const healthPanel = createHealthPanel((id) => {
    selected = id;
    openTimeline(id);
    timeline.scrollIntoView({ block: 'nearest' });
  });
  app.replaceChildren(
    h('header', {}, h('h1', {}, 'Parley telemetry'), filters.root, updated, who, signOutButton),
    h(
      'main',
      {},
      kpis,
      outcomesPanel.root,
      charts,
      h('div', { class: 'split' }, list, timeline),
      handoffs,
      healthPanel.root,
      h('div', { class: 'split operations' }, withHuman, deliveries),
      knowledge.card,
    ),
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
      const [summary, convs, handedOver, hooks, handoffTimes] = await Promise.all([
        api<Summary & { currency: string }>(`/api/v1/telemetry/summary?${q.summary}`),
        api<{ items: ConversationRow[] }>(`/api/v1/telemetry/conversations?limit=50${q.channel}`),
        api<ConversationList>('/conversations?state=withHuman&limit=50'),
        api<Deliveries>('/api/v1/webhooks/deliveries?limit=50'),
        api<HandoffSummary>(`/api/v1/telemetry/handoffs?${q.window}`),
      ]);
      if (stopped) return;
      renderHandoffs(handoffs, handoffTimes, handedOver, filters.label());
      const range = filters.range(now);
      await Promise.all([outcomesPanel.refresh(range), healthPanel.refresh(range)]);
      if (stopped) return;
      renderWithHuman(withHuman, handedOver, now);
      renderDeliveries(deliveries, hooks, now);
      // Beside the rest, never holding the tiles back; its failure shows in its own card.
      void knowledge.refresh(q.summary, now);
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
            h('td', { 'data-state': c.state }, stateWords(c.state)),
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
        return loginView(app, { kind: 'error', text: err.message });
      }
      updated.textContent = `refresh failed: ${(err as Error).message}`;
    }
    if (!stopped) timer = setTimeout(() => void refresh(), REFRESH_MS);
  };
  await refresh();
}

installStyles();
const app = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
const linkToken = location.pathname === '/agents/set-password' ? new URLSearchParams(location.search).get('token') : null;
if (linkToken) setPasswordView(app, linkToken);
else
  void currentPerson().then((person) => {
    if (person) return dashboardView(app, person);
    if (secret.get()) return dashboardView(app);
    loginView(app);
  });
