// The agent inbox page (/inbox): sign in (email and password: a session cookie), then the views, the list and one
// conversation whole, kept current by the live feed. Keyboard: j/k move through the list, r reply, e resolve,
// / search, ? the shortcuts.
import { createAlerts } from './alerts.ts';
import { api, Refused, setCsrf, Unauthorized, type AgentPresence, type ConversationWhole, type InboxList, type SavedReplyView, type SignedIn } from './api.ts';
import { createComposer, type Composer } from './composer.ts';
import { renderCustomer, renderHeader, renderTranscript } from './conversation.ts';
import { h } from './dom.ts';
import { customerName, renderList, renderNav, tickTimers, type View } from './list.ts';
import { connectLive } from './live.ts';
import { shortcutsHelp, signInForm } from './parts.ts';
import { STYLES } from './styles.ts';

interface State {
  me: { agentId: string; name: string; role: string };
  view: View;
  q: string;
  list?: InboxList;
  selected?: string;
  whole?: ConversationWhole;
  agents: AgentPresence[];
  replies: SavedReplyView[];
  /** Handoffs already announced (a refresh does not announce them again). */
  known: Set<string>;
}

function installStyles() {
  const style = document.createElement('style');
  style.textContent = STYLES;
  document.head.append(style);
}

function start(app: HTMLElement, person: SignedIn) {
  setCsrf(person.csrfToken ?? '');
  const s: State = {
    me: { agentId: person.agent.agentId, name: person.agent.name, role: person.agent.role },
    view: 'waiting',
    q: '',
    agents: [],
    replies: [],
    known: new Set(),
  };
  const alerts = createAlerts();
  const status = h('p', { class: 'toast', role: 'status', 'data-testid': 'toast' });
  const liveState = h('span', { class: 'live', 'data-testid': 'live-state' }, 'Connecting…');
  const presence = h('ul', { class: 'presence', 'aria-label': 'Agents', 'data-testid': 'presence' });
  const navSlot = h('div', { class: 'nav-slot' });
  const search = h('input', { type: 'search', id: 'search', 'data-testid': 'search', placeholder: 'Email, id, phone or words' });
  const listSlot = h('div', { class: 'list-slot' });
  const convSlot = h(
    'section',
    { class: 'conversation', 'aria-label': 'Conversation', 'data-testid': 'conversation' },
    h('p', { class: 'empty' }, 'Choose a conversation (j/k).'),
  );
  const sideSlot = h('div', { class: 'side-slot' });
  let composer: Composer | undefined;
  let composerFor: string | undefined;
  let toastTimer: ReturnType<typeof setTimeout> | undefined;
  const say = (text: string) => {
    status.textContent = text;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (status.textContent = ''), 6000);
  };
  const fail = (err: unknown) => {
    if (err instanceof Unauthorized) return void main(app, err.message);
    say(err instanceof Refused ? err.message : String((err as Error).message ?? err));
  };

  const drawList = () => {
    navSlot.replaceChildren(renderNav(s.list, s.view, (v) => void choose(v)));
    listSlot.replaceChildren(renderList(s.list, s.selected, Date.now(), (id) => void openConversation(id)));
    alerts.title(s.list?.counts.waiting ?? 0);
  };
  const drawConversation = () => {
    const w = s.whole;
    if (!w) return;
    if (!composer || composerFor !== w.item.conversationId) {
      composerFor = w.item.conversationId;
      composer = createComposer({
        send: (text, note) => send(w.item.conversationId, text, note),
        typing: (on) => void api.typing(w.item.conversationId, on).catch(() => undefined),
        replies: () => s.replies,
      });
    }
    const transcript = renderTranscript(w);
    const actions = {
      claim: () =>
        void act(async () => {
          await api.act(w.item.conversationId, 'claim');
          // Now it is the agent's: the list follows it to Mine.
          s.view = 'mine';
        }, 'Claimed.'),
      release: () => void act(() => api.act(w.item.conversationId, 'release'), 'Released to the assistant.'),
      resolve: () => void act(() => api.act(w.item.conversationId, 'resolve'), 'Resolved.'),
      assign: (agentId: string) => void act(() => api.assign(w.item.conversationId, agentId), 'Assigned.'),
    };
    convSlot.replaceChildren(renderHeader(w, s.me.agentId, s.agents, actions), transcript, composer.root);
    sideSlot.replaceChildren(renderCustomer(w, (id) => void openConversation(id)));
    transcript.scrollTop = transcript.scrollHeight;
  };

  const refreshList = async () => {
    const list = await api.list(s.view, s.q);
    s.list = list;
    drawList();
  };
  const refreshConversation = async () => {
    if (!s.selected) return;
    s.whole = await api.whole(s.selected);
    drawConversation();
  };
  const act = async (fn: () => Promise<unknown>, done: string) => {
    try {
      await fn();
      say(done);
    } catch (err) {
      fail(err);
    }
    await Promise.all([refreshList(), refreshConversation()]).catch(fail);
  };
  const send = async (id: string, text: string, note: boolean) => {
    try {
      await (note ? api.note(id, text) : api.reply(id, text, crypto.randomUUID()));
      await refreshConversation();
      return true;
    } catch (err) {
      fail(err);
      return false;
    }
  };
  const choose = async (v: View) => {
    s.view = v;
    await refreshList().catch(fail);
  };
  const openConversation = async (id: string) => {
    s.selected = id;
    drawList();
    try {
      await refreshConversation();
      await api.act(id, 'read');
      await refreshList();
    } catch (err) {
      fail(err);
    }
  };
  const move = (by: number) => {
    const items = s.list?.items ?? [];
    if (!items.length) return;
    const at = items.findIndex((i) => i.conversationId === s.selected);
    const next = items[Math.max(0, Math.min(items.length - 1, at < 0 ? 0 : at + by))];
    void openConversation(next.conversationId).then(() => listSlot.querySelector<HTMLElement>(`[data-id="${CSS.escape(next.conversationId)}"]`)?.focus());
  };

  /** The last presence the feed told (it may come before the agents' list). */
  let online = new Map<string, string>();
  const drawPresence = (rows?: { agentId: string; name: string; presence: string }[]) => {
    if (rows) online = new Map(rows.map((r) => [r.agentId, r.presence]));
    s.agents = s.agents.map((a) => Object.assign({}, a, { presence: online.get(a.agentId) ?? 'offline' }));
    presence.replaceChildren(
      ...s.agents.map((a) => h('li', { class: `p-${a.presence}` }, h('span', { class: 'dot', 'aria-hidden': 'true' }), `${a.name} · ${a.presence}`)),
    );
  };

  const live = connectLive({
    status: (st) => (liveState.textContent = st === 'live' ? 'Live' : 'Reconnecting…'),
    connected: () => void Promise.all([refreshList(), refreshConversation()]).catch(fail),
    presence: (p) => drawPresence(p.agents),
    event: (e) => {
      void refreshList()
        .then(() => {
          if (e.kind !== 'handoff' || s.known.has(`${e.conversationId}:${e.at}`)) return;
          s.known.add(`${e.conversationId}:${e.at}`);
          const item = s.list?.items.find((i) => i.conversationId === e.conversationId);
          alerts.newHandoff(item ? customerName(item) : 'A customer', () => void openConversation(e.conversationId));
        })
        .catch(fail);
      // The open conversation is read as it changes (while the page is seen).
      if (e.conversationId === s.selected)
        void refreshConversation()
          .then(() => (document.visibilityState === 'visible' ? api.act(e.conversationId, 'read').then(refreshList) : undefined))
          .catch(fail);
    },
  });

  search.addEventListener('input', () => {
    s.q = search.value.trim();
    void refreshList().catch(fail);
  });
  const signOut = h('button', { type: 'button', class: 'link', 'data-testid': 'sign-out' }, 'Sign out');
  signOut.addEventListener('click', () => {
    live.close();
    void api.signOut().finally(() => main(app, 'Signed out.'));
  });
  const settings = h(
    'details',
    { class: 'settings' },
    h('summary', {}, 'Settings'),
    alerts.settings(() => alerts.title(s.list?.counts.waiting ?? 0)),
    shortcutsHelp(),
  );

  app.replaceChildren(
    h('header', { class: 'top' }, h('h1', {}, 'Parley inbox'), liveState, h('span', { class: 'me', 'data-testid': 'me' }, s.me.name), signOut),
    h(
      'div',
      { class: 'layout' },
      h(
        'aside',
        { class: 'left', 'aria-label': 'Views, search and team' },
        navSlot,
        h('div', { class: 'search' }, h('label', { for: 'search' }, 'Search customers'), search),
        settings,
        h('h2', { class: 'sr' }, 'Agents'),
        presence,
      ),
      h('main', { class: 'middle' }, h('h2', { class: 'sr' }, 'Conversations'), listSlot),
      convSlot,
      sideSlot,
    ),
    status,
  );
  drawList();

  document.addEventListener('keydown', (e) => {
    const t = e.target as HTMLElement;
    if (e.ctrlKey || e.metaKey || e.altKey || t.closest('input, textarea, select')) return;
    if (e.key === 'j') move(1);
    else if (e.key === 'k') move(-1);
    else if (e.key === 'r' && composer) composer.focus();
    else if (e.key === 'e' && s.whole && !s.whole.item.resolvedAt) void act(() => api.act(s.whole!.item.conversationId, 'resolve'), 'Resolved.');
    else if (e.key === '/') search.focus();
    else if (e.key === '?') settings.open = !settings.open;
    else return;
    e.preventDefault();
  });
  setInterval(() => tickTimers(listSlot, Date.now(), s.list?.slaMinutes ?? 5), 1000);
  void Promise.all([api.agents(), api.savedReplies()])
    .then(([agents, replies]) => {
      s.agents = agents.items;
      s.replies = replies.items;
      if (online.size === 0) online = new Map(agents.items.filter((a) => a.presence !== 'offline').map((a) => [a.agentId, a.presence]));
      drawPresence();
    })
    .catch(fail);
}

function main(app: HTMLElement, message?: string) {
  void api.me().then((person) => {
    if (person?.csrfToken) return start(app, person);
    const form = signInForm(message, async (email, password) => {
      const r = await api.signIn(email, password);
      if (r.ok) start(app, r.person);
      return r.ok ? undefined : r.message;
    });
    app.replaceChildren(h('main', { class: 'signin' }, h('h1', {}, 'Parley inbox'), form));
    form.querySelector('input')?.focus();
  });
}

installStyles();
main(document.getElementById('app')!);
