// The agent inbox page (/inbox): sign in (email and password: a session cookie), then the views, the list and one
// conversation whole, kept current by the live feed. Keyboard: j/k move through the list, r reply, e resolve,
// / search, ? the shortcuts.
import { createAlerts } from './alerts.ts';
import {
  api,
  Refused,
  setCsrf,
  Unauthorized,
  type AgentPresence,
  type ConversationWhole,
  type InboxEventFrame,
  type InboxList,
  type SavedReplyView,
  type SignedIn,
} from './api.ts';
import { createComposer, type Composer } from './composer.ts';
import { assignLabel, notesOnlyWhy, renderCustomer, renderHeader, renderTranscript } from './conversation.ts';
import { h } from './dom.ts';
import { copyLink, linkedConversation, showInAddress } from './link.ts';
import { customerName, renderList, renderNav, tickTimers, type View } from './list.ts';
import { connectLive } from './live.ts';
import { addAgentForm, signInForm } from './parts.ts';
import { createShell, type Shell } from './shell.ts';
import { STYLES } from './styles.ts';

interface App {
  root: HTMLElement;
  me: { agentId: string; name: string; role: string };
  view: View;
  q: string;
  list?: InboxList;
  selected?: string;
  whole?: ConversationWhole;
  agents: AgentPresence[];
  /** The last presence the feed told (it may come before the agents' list). */
  online: Map<string, string>;
  /** Whether the live feed is up. */
  live: boolean;
  /** The feed was lost since presence was last told: nobody's presence is known (none is shown) until it is again. */
  presenceStale: boolean;
  replies: SavedReplyView[];
  /** Handoffs already announced (a refresh does not announce them again). */
  known: Set<string>;
  shell: Shell;
  alerts: ReturnType<typeof createAlerts>;
  composer?: Composer;
  composerFor?: string;
  toastTimer?: ReturnType<typeof setTimeout>;
}

function installStyles() {
  const style = document.createElement('style');
  style.textContent = STYLES;
  document.head.append(style);
}

function say(a: App, text: string) {
  a.shell.toast.textContent = text;
  clearTimeout(a.toastTimer);
  a.toastTimer = setTimeout(() => (a.shell.toast.textContent = ''), 6000);
}

function fail(a: App, err: unknown) {
  if (err instanceof Unauthorized) return void main(a.root, err.message);
  // fetch's own failure (a TypeError: "Failed to fetch") means the server could not be reached.
  say(
    a,
    err instanceof Refused ? err.message : err instanceof TypeError ? 'Parley cannot be reached: try again in a moment' : String((err as Error).message ?? err),
  );
}

function drawList(a: App) {
  a.shell.navSlot.replaceChildren(renderNav(a.list, a.view, (v) => void choose(a, v)));
  a.shell.listSlot.replaceChildren(renderList(a.list, a.q, a.selected, Date.now(), (id) => void openConversation(a, id)));
  a.alerts.title(a.list?.counts.waiting ?? 0);
}

function composerOf(a: App, id: string): Composer {
  if (!a.composer || a.composerFor !== id) {
    a.composerFor = id;
    a.composer = createComposer({
      send: (text, note) => send(a, id, text, note),
      typing: (on) => void api.typing(id, on).catch(() => undefined),
      replies: () => a.replies,
    });
  }
  return a.composer;
}

function drawConversation(a: App) {
  const w = a.whole;
  if (!w) return;
  const id = w.item.conversationId;
  const transcript = renderTranscript(w);
  const actions = {
    claim: () =>
      void act(
        a,
        async () => {
          await api.act(id, 'claim');
          a.view = 'mine'; // now it is the agent's: the list follows it to Mine
        },
        'Claimed.',
      ),
    takeOver: () =>
      void act(
        a,
        async () => {
          await api.handoff(id, `${a.me.name} took the conversation over in the inbox`);
          // While the assistant is writing a reply, the handoff happens once it ends: the claim waits for that.
          await api.act(id, 'claim').catch((err: unknown) => {
            if (!(err instanceof Refused && err.code === 'not_handed_off')) throw err;
            throw new Error('Handed over once the assistant ends its reply: claim it then, under Waiting for a person');
          });
          a.view = 'mine';
        },
        'Taken over: the assistant stops answering.',
      ),
    release: () => void act(a, () => api.act(id, 'release'), 'Released to the assistant.'),
    resolve: () => void act(a, () => api.act(id, 'resolve'), 'Resolved.'),
    assign: (agentId: string) => void act(a, () => api.assign(id, agentId), 'Assigned.'),
    copyLink: () => void copyLink(id).then((text) => say(a, text)),
  };
  const composer = composerOf(a, id);
  composer.notesOnly(notesOnlyWhy(w.item, a.me));
  a.shell.convSlot.replaceChildren(renderHeader(w, a.me, shownAgents(a), actions), transcript, composer.root);
  a.shell.sideSlot.replaceChildren(renderCustomer(w, (other) => void openConversation(a, other)));
  transcript.scrollTop = transcript.scrollHeight;
}

async function refreshList(a: App) {
  a.list = await api.list(a.view, a.q);
  drawList(a);
}

async function refreshConversation(a: App) {
  if (!a.selected) return;
  a.whole = await api.whole(a.selected);
  drawConversation(a);
}

async function act(a: App, fn: () => Promise<unknown>, done: string) {
  try {
    await fn();
    say(a, done);
  } catch (err) {
    fail(a, err);
  }
  await Promise.all([refreshList(a), refreshConversation(a)]).catch((err) => fail(a, err));
}

async function send(a: App, id: string, text: string, note: boolean) {
  try {
    await (note ? api.note(id, text) : api.reply(id, text, crypto.randomUUID()));
    await refreshConversation(a);
    return true;
  } catch (err) {
    fail(a, err);
    return false;
  }
}

async function choose(a: App, v: View) {
  a.view = v;
  await refreshList(a).catch((err) => fail(a, err));
}

const NO_SUCH_CONVERSATION = 'No conversation matches this link: it may have been mistyped or cut short.';
const NOT_A_LINK = 'This link does not name a conversation.';

/** The pane when a link names no conversation this inbox can open: said there (the pane is never blank) and announced. */
function noConversation(a: App, text: string) {
  a.selected = undefined;
  a.whole = undefined;
  drawList(a);
  a.shell.convSlot.replaceChildren(
    h('div', { class: 'empty notice', 'data-testid': 'link-notice' }, h('p', {}, text), h('p', {}, 'Choose one from the list, or ask for the link again.')),
  );
  a.shell.sideSlot.replaceChildren();
  say(a, text);
}

async function openConversation(a: App, id: string) {
  a.selected = id;
  showInAddress(id);
  drawList(a);
  try {
    await refreshConversation(a);
  } catch (err) {
    // Unknown (404) or an id the server refuses (400): a link gone wrong, said in the pane.
    if (err instanceof Refused && (err.status === 404 || err.status === 400)) return void (a.selected === id && noConversation(a, NO_SUCH_CONVERSATION));
    return fail(a, err);
  }
  try {
    await api.act(id, 'read');
    await refreshList(a);
  } catch (err) {
    fail(a, err);
  }
}

/** Opens the conversation the address names (on load, after sign-in, on hashchange), whether or not it is listed. */
function openLinked(a: App) {
  const linked = linkedConversation();
  if (!linked) return;
  if ('malformed' in linked) return noConversation(a, NOT_A_LINK);
  if (linked.id !== a.selected) void openConversation(a, linked.id);
}

function move(a: App, by: number) {
  const items = a.list?.items ?? [];
  if (!items.length) return;
  const at = items.findIndex((i) => i.conversationId === a.selected);
  const next = items[Math.max(0, Math.min(items.length - 1, at < 0 ? 0 : at + by))];
  void openConversation(a, next.conversationId).then(() =>
    a.shell.listSlot.querySelector<HTMLElement>(`[data-id="${CSS.escape(next.conversationId)}"]`)?.focus(),
  );
}

/** The team with their presence as far as it is known: "unknown" for everyone while the feed is (or was) down. */
const shownAgents = (a: App) => a.agents.map((x) => ({ agentId: x.agentId, name: x.name, presence: a.presenceStale ? 'unknown' : x.presence }));

/** The presence list (and the Assign list's labels); `rows`: what the feed told, now known. */
function drawPresence(a: App, rows?: { agentId: string; presence: string }[]) {
  if (rows) {
    a.online = new Map(rows.map((r) => [r.agentId, r.presence]));
    a.presenceStale = false;
  }
  a.agents = a.agents.map((x) => Object.assign({}, x, { presence: a.online.get(x.agentId) ?? 'offline' }));
  const shown = shownAgents(a);
  a.shell.presenceNote.textContent = a.presenceStale ? 'Presence unknown while offline' : '';
  a.shell.presence.replaceChildren(
    ...shown.map((x) => h('li', { class: `p-${x.presence}` }, h('span', { class: 'dot', 'aria-hidden': 'true' }), `${x.name} · ${x.presence}`)),
  );
  for (const o of a.shell.convSlot.querySelectorAll<HTMLOptionElement>('#assign option:not([value=""])')) {
    const x = shown.find((ag) => ag.agentId === o.value);
    if (x) o.textContent = assignLabel(x);
  }
}

/** The team from the server; with the feed up, their presence too when the feed has not told it since it was lost. */
async function refreshAgents(a: App) {
  const items = (await api.agents()).items;
  a.agents = items;
  if ((a.presenceStale && a.live) || a.online.size === 0) {
    a.online = new Map(items.filter((x) => x.presence !== 'offline').map((x) => [x.agentId, x.presence]));
    if (a.live) a.presenceStale = false;
  }
  drawPresence(a);
}

function onEvent(a: App, e: InboxEventFrame) {
  void refreshList(a)
    .then(() => {
      if (e.kind !== 'handoff' || a.known.has(`${e.conversationId}:${e.at}`)) return;
      a.known.add(`${e.conversationId}:${e.at}`);
      const item = a.list?.items.find((i) => i.conversationId === e.conversationId);
      a.alerts.newHandoff(item ? customerName(item) : 'A customer', () => void openConversation(a, e.conversationId));
    })
    .catch((err) => fail(a, err));
  // The open conversation is read as it changes (while the page is seen).
  if (e.conversationId !== a.selected) return;
  void refreshConversation(a)
    .then(() => (document.visibilityState === 'visible' ? api.act(e.conversationId, 'read').then(() => refreshList(a)) : undefined))
    .catch((err) => fail(a, err));
}

function installKeys(a: App, signal: AbortSignal) {
  document.addEventListener(
    'keydown',
    (e) => {
      const t = e.target as HTMLElement;
      if (e.ctrlKey || e.metaKey || e.altKey || t.closest('input, textarea, select')) return;
      const open = a.whole?.item;
      if (e.key === 'j') move(a, 1);
      else if (e.key === 'k') move(a, -1);
      else if (e.key === 'r' && a.composer) a.composer.focus();
      else if (e.key === 'e' && open && !open.resolvedAt) void act(a, () => api.act(open.conversationId, 'resolve'), 'Resolved.');
      else if (e.key === '/') a.shell.search.focus();
      else if (e.key === '?') a.shell.settings.open = !a.shell.settings.open;
      else return;
      e.preventDefault();
    },
    { signal },
  );
}

async function addAgent(a: App, name: string, email: string, role: 'agent' | 'admin'): Promise<string> {
  try {
    const r = await api.createAgent(name, email, role);
    await refreshAgents(a);
    return `Send ${name} this link to choose a password: ${new URL(r.setPasswordUrl, location.href).href}`;
  } catch (err) {
    return err instanceof Refused ? err.message : String(err);
  }
}

function start(root: HTMLElement, person: SignedIn) {
  setCsrf(person.csrfToken ?? '');
  const alerts = createAlerts();
  const me = { agentId: person.agent.agentId, name: person.agent.name, role: person.agent.role };
  const shell = createShell(
    me.name,
    alerts.settings(() => alerts.title(a.list?.counts.waiting ?? 0)),
  );
  const a: App = {
    root,
    me,
    view: 'waiting',
    q: '',
    agents: [],
    online: new Map(),
    live: false,
    presenceStale: false,
    replies: [],
    known: new Set(),
    shell,
    alerts,
  };
  const live = connectLive({
    status: (st) => {
      shell.liveState.textContent = st === 'live' ? 'Live' : 'Connection lost: reconnecting…';
      shell.liveState.classList.toggle('down', st !== 'live');
      a.live = st === 'live';
      // Who is here is no longer known: presence is not claimed until the server tells it again.
      if (!a.live) {
        a.presenceStale = true;
        drawPresence(a);
      }
    },
    connected: () => void Promise.all([refreshList(a), refreshConversation(a), a.presenceStale ? refreshAgents(a) : undefined]).catch((err) => fail(a, err)),
    presence: (p) => drawPresence(a, p.agents),
    event: (e) => onEvent(a, e),
  });
  shell.search.addEventListener('input', () => {
    a.q = shell.search.value.trim();
    void refreshList(a).catch((err) => fail(a, err));
  });
  // Signing out stops the feed, the keys and the timers of this page.
  const ended = new AbortController();
  shell.signOut.addEventListener('click', () => {
    showInAddress(undefined); // the next person to sign in here starts from the list
    live.close();
    ended.abort();
    clearInterval(timers);
    void api.signOut().finally(() => main(root, 'Signed out.'));
  });
  if (me.role === 'admin') shell.settings.append(addAgentForm((name, email, role) => addAgent(a, name, email, role)));
  root.replaceChildren(...shell.root);
  drawList(a);
  installKeys(a, ended.signal);
  window.addEventListener('hashchange', () => openLinked(a), { signal: ended.signal });
  openLinked(a);
  const timers = setInterval(() => tickTimers(shell.listSlot, Date.now(), a.list?.slaMinutes ?? 5), 1000);
  void Promise.all([refreshAgents(a), api.savedReplies().then((r) => (a.replies = r.items))]).catch((err) => fail(a, err));
}

function main(root: HTMLElement, message?: string) {
  void api.me().then((person) => {
    if (person?.csrfToken) return start(root, person);
    const form = signInForm(message, async (email, password) => {
      const r = await api.signIn(email, password);
      if (r.ok) start(root, r.person);
      return r.ok ? undefined : r.message;
    });
    root.replaceChildren(h('main', { class: 'signin' }, h('h1', {}, 'Parley inbox'), form));
    form.querySelector('input')?.focus();
  });
}

installStyles();
main(document.getElementById('app')!);
