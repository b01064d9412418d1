// The DOM of the widget, inside an open shadow root. Text is always set with
// textContent: nothing from the server is ever parsed as HTML.
import { confirmNode, el, messageNode, receiptKind, receiptNode, refreshTimes, setSendState, statusNode, type NodeContext } from './nodes.ts';
import { typedWhileConfirming, type Bubble, type WidgetState } from './state.ts';
import { errorText, fill, type Strings } from './strings.ts';
import { createStreamingBubble } from './streaming-view.ts';
import { createHandoffBox } from './handoff-view.ts';
import { createFeedbackView } from './feedback-view.ts';
import { STYLES } from './styles.ts';
import { applyTheme, type ResolvedTheme } from './theme.ts';

export interface ViewHandlers {
  onSend(text: string): void;
  /** Returns false when the answer could not be sent (the card stays usable). */
  onAnswer(id: string, approve: boolean): boolean;
  onPanel(open: boolean): void;
  /** Send a refused message again (its Retry button). */
  onRetry(id: string): void;
  /** The email form while waiting for a person; false when it could not be sent. */
  onContact?(email: string): boolean;
  /** "Did that answer your question?" and the rating (docs/outcomes.md); false when not sent. */
  onResolve(yes: boolean): boolean;
  /** "Talk to a person" after a "No": false when it could not be sent. */
  onPerson?(): boolean;
  onRate(score: number, comment?: string): boolean;
}

export interface ViewOptions {
  strings: Strings;
  locale: string;
  /** The layout's direction (`dir` of the wrapper): set, so a right-to-left page never flips an English widget. */
  dir?: 'ltr' | 'rtl';
  theme: ResolvedTheme;
  now?: () => number;
  /** The longest message the server takes (longer text is refused in the input, never cut). */
  maxChars: number;
}

export interface View {
  render(state: WidgetState): void;
  open(): void;
  close(): void;
  destroy(): void;
  readonly host: HTMLElement;
}

// Static markup only (no data): icons.
const ICON_CHAT = '<path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z"/>';
const ICON_DOWN = '<path d="M6.4 8.6 12 14.2l5.6-5.6L19 10l-7 7-7-7z"/>';
const ICON_X = '<path d="M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6l5.6-5.6L5 6.4z"/>';
const ICON_SEND = '<path d="M3.4 20.4 21 12 3.4 3.6 3.4 10l12.6 2-12.6 2z"/>';
const svg = (path: string, cls = '') => `<svg class="${cls}" viewBox="0 0 24 24" fill="currentColor" aria-hidden="true" focusable="false">${path}</svg>`;

const TIME_REFRESH_MS = 30_000;
/** Messages of one sender closer than this share one time label (the last one's). */
const GROUP_MS = 5 * 60_000;
const isMessage = (b: Bubble) => b.role === 'user' || b.role === 'assistant' || b.role === 'agent';
/** Phones: the panel fills the screen, so it is a modal dialog and Tab stays inside it. */
const PHONE_QUERY = '(max-width: 480px)';
/** Closer than this to the bottom, the log follows new messages. */
const STICK_PX = 80;

export function createView(container: HTMLElement | undefined, handlers: ViewHandlers, o: ViewOptions): View {
  const s = o.strings;
  const ctx: NodeContext = { strings: s, locale: o.locale, now: o.now ?? Date.now };
  const host = el('div', { id: 'parley-widget' });
  (container ?? document.body).appendChild(host);
  const root = host.attachShadow({ mode: 'open' });
  const style = el('style');
  style.textContent = STYLES;
  const wrap = el('div', { class: 'pw', lang: o.locale, dir: o.dir ?? 'ltr' });

  const launcher = el('button', { class: 'launcher', type: 'button', 'aria-label': s.openChat, 'aria-expanded': 'false', 'data-testid': 'launcher' });
  launcher.innerHTML = svg(ICON_CHAT, 'ic-open') + svg(ICON_DOWN, 'ic-close');
  const badge = el('span', { class: 'badge', 'aria-hidden': 'true', 'data-testid': 'unread', hidden: '' });
  launcher.append(badge);
  const panel = el('div', { class: 'panel', role: 'dialog', 'aria-label': s.dialogLabel, 'aria-modal': 'false', hidden: '', 'data-testid': 'panel' });
  const head = el('div', { class: 'head' });
  const headText = el('div', { class: 'head-text' });
  const title = el('div', { class: 'title', 'data-testid': 'title' }, o.theme.title ?? s.title);
  const subtitle = el('div', { class: 'subtitle', 'data-testid': 'subtitle' }, o.theme.subtitle ?? s.subtitle);
  headText.append(title, subtitle);
  const statusPill = el('span', { class: 'status' });
  const dot = el('span', { class: 'dot', 'aria-hidden': 'true', 'data-state': 'Connecting' });
  const status = el('span', { 'data-testid': 'status', role: 'status' }, s.statusConnecting);
  statusPill.append(dot, status);
  const close = el('button', { class: 'close', type: 'button', 'aria-label': s.closeChat });
  close.innerHTML = svg(ICON_X);
  head.append(headText, statusPill, close);
  const log = el('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': s.messagesLabel, 'data-testid': 'messages' });
  const welcome = el('p', { class: 'welcome', 'data-testid': 'welcome' }, s.welcome);
  const typing = el('div', { class: 'typing', 'data-testid': 'typing', hidden: '' });
  const typingText = el('span', { class: 'sr' }, s.typing);
  const typingWho = el('span', { class: 'who', 'data-testid': 'typing-agent', 'aria-hidden': 'true', hidden: '' });
  typing.append(typingText, typingWho, el('i', { 'aria-hidden': 'true' }), el('i', { 'aria-hidden': 'true' }), el('i', { 'aria-hidden': 'true' }));
  const notice = el('div', { class: 'notice', role: 'status', 'data-testid': 'notice', hidden: '' });
  const error = el('div', { class: 'error', role: 'alert', 'data-testid': 'error', hidden: '' });
  const form = el('form', { class: 'composer' });
  const label = el('label', { class: 'sr', for: 'parley-input' }, s.inputLabel);
  // Several lines: Enter sends, Shift+Enter starts a new line. No maxlength (it cuts a paste without a word).
  const input = el('textarea', {
    id: 'parley-input',
    // Each text its own way: Arabic typed in an English widget runs right to left, and English in an Arabic one left to right.
    dir: 'auto',
    rows: '1',
    autocomplete: 'off',
    enterkeyhint: 'send',
    placeholder: s.placeholder,
    'data-testid': 'input',
    'aria-describedby': 'parley-count',
  });
  const count = el('div', { class: 'count', id: 'parley-count', 'data-testid': 'count', 'aria-live': 'polite', hidden: '' });
  const send = el('button', { class: 'send', type: 'submit', 'data-testid': 'send', 'aria-label': s.send });
  send.innerHTML = svg(ICON_SEND);
  send.append(el('span', { class: 'sr' }, s.send));
  form.append(label, input, send, count);
  // Announcements that are not in the log: a card waiting for an answer, news while the panel is closed.
  const announcer = el('div', { class: 'sr', role: 'status', 'aria-live': 'polite', 'data-testid': 'announcer' });
  log.append(welcome, typing);
  const handoffBox = createHandoffBox(ctx, (email) => handlers.onContact?.(email) ?? false);
  panel.append(head, log, handoffBox.node, notice, error, form);
  wrap.append(panel, launcher, announcer);
  root.append(style, wrap);
  applyTheme(host, wrap, o.theme);

  const nodes = new Map<string, { node: HTMLElement; kind: string }>();
  let unread = 0;
  let timeTimer: ReturnType<typeof setInterval> | undefined;

  // Phones: the panel fills the visual viewport, so the on-screen keyboard never covers the input.
  const vv = typeof window !== 'undefined' ? window.visualViewport : null;
  const fitViewport = () => {
    if (!vv) return;
    wrap.setAttribute('data-vv', '');
    wrap.style.setProperty('--pw-vv-height', `${vv.height}px`);
    wrap.style.setProperty('--pw-vv-top', `${vv.offsetTop}px`);
  };

  const launcherLabel = () => {
    if (!panel.hidden) return s.closeChat;
    if (!unread) return s.openChat;
    return unread === 1 ? s.openChatUnread1 : fill(s.openChatUnreadN, { n: unread });
  };
  const isPhone = () => typeof matchMedia === 'function' && matchMedia(PHONE_QUERY).matches;
  const open = () => {
    panel.hidden = false;
    panel.setAttribute('aria-modal', String(isPhone()));
    wrap.setAttribute('data-open', '');
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', launcherLabel());
    fitViewport();
    vv?.addEventListener('resize', fitViewport);
    vv?.addEventListener('scroll', fitViewport);
    refreshTimes(log, ctx);
    timeTimer ??= setInterval(() => refreshTimes(log, ctx), TIME_REFRESH_MS);
    handlers.onPanel(true);
    log.scrollTop = log.scrollHeight;
    if (!input.disabled) input.focus();
  };
  const closePanel = () => {
    panel.hidden = true;
    wrap.removeAttribute('data-open');
    launcher.setAttribute('aria-expanded', 'false');
    vv?.removeEventListener('resize', fitViewport);
    vv?.removeEventListener('scroll', fitViewport);
    if (timeTimer) clearInterval(timeTimer);
    timeTimer = undefined;
    handlers.onPanel(false);
    launcher.focus();
  };

  launcher.addEventListener('click', () => (panel.hidden ? open() : closePanel()));
  close.addEventListener('click', closePanel);
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') closePanel();
    if (e.key === 'Tab' && panel.getAttribute('aria-modal') === 'true') trapTab(e);
  });
  /** Tab from the last control goes to the first, Shift+Tab from the first to the last. */
  const trapTab = (e: KeyboardEvent) => {
    const focusable = [...panel.querySelectorAll<HTMLElement>('button, textarea, input, a[href], [tabindex]:not([tabindex="-1"])')].filter(
      (x) => !(x as HTMLButtonElement).disabled && x.getClientRects().length > 0,
    );
    if (!focusable.length) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    const active = root.activeElement;
    if (e.shiftKey && (active === first || !panel.contains(active))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (active === last || !panel.contains(active))) {
      e.preventDefault();
      first.focus();
    }
  };
  /** Grows the input with its lines (CSS caps it); shows the count once the text is over the limit. */
  const fitInput = (): boolean => {
    input.style.height = '';
    if (input.scrollHeight > input.clientHeight) input.style.height = `${input.scrollHeight + 2}px`;
    const over = input.value.trim().length > o.maxChars;
    count.hidden = !over;
    count.textContent = over ? fill(s.tooLongCount, { n: input.value.trim().length, max: o.maxChars }) : '';
    input.setAttribute('aria-invalid', String(over));
    return over;
  };
  input.addEventListener('input', fitInput);
  input.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.shiftKey || e.isComposing) return;
    e.preventDefault();
    form.requestSubmit();
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || input.disabled || fitInput()) return;
    input.value = '';
    fitInput();
    handlers.onSend(text);
    input.focus(); // keeps the on-screen keyboard up on phones
  });

  const streaming = createStreamingBubble(log, typing);
  const feedback = createFeedbackView(ctx, { onResolve: handlers.onResolve, onRate: handlers.onRate, onPerson: () => handlers.onPerson?.() ?? false });

  const build = (b: Bubble): { node: HTMLElement; kind: string } => {
    if (b.role === 'status') {
      if (!b.past) announcer.textContent = statusNode(b, ctx).textContent ?? '';
      return { node: statusNode(b, ctx), kind: 'message' };
    }
    if (b.role !== 'confirmation') return { node: messageNode(b, ctx), kind: 'message' };
    if (b.outcome) return { node: receiptNode(b, ctx), kind: receiptKind(b) };
    const card = confirmNode(b, ctx, (approve) => {
      // Focus goes back to the input once the answer is sent; if it was not, the error says why.
      if (handlers.onAnswer(b.id, approve)) input.focus();
    });
    // Focus is never moved to the card: a customer still typing must not land on Approve. It is announced
    // and reachable with Tab (Shift+Tab from the input).
    announcer.textContent = fill(s.confirmAnnounce, { summary: b.text });
    return { node: card, kind: 'pending' };
  };

  const noticeText = (state: WidgetState): string => {
    if (state.status === 'Reconnecting') return s.noticeReconnecting;
    if (state.reason === 'refreshing') return s.noticeRefreshing;
    if (state.status !== 'Disconnected') return typedWhileConfirming(state) ? fill(s.noticeConfirmFirst, { approve: s.approve, decline: s.decline }) : '';
    return state.reason === 'origin' ? s.noticeOriginRefused : s.noticeSessionEnded;
  };

  const render = (state: WidgetState) => {
    status.textContent = s[`status${state.status}`];
    status.setAttribute('data-state', state.status);
    dot.setAttribute('data-state', state.status);
    if (state.unread > unread) announcer.textContent = state.unread === 1 ? s.newMessages1 : fill(s.newMessagesN, { n: state.unread });
    unread = state.unread;
    badge.hidden = unread === 0;
    badge.textContent = unread > 9 ? '9+' : String(unread);
    launcher.setAttribute('aria-label', launcherLabel());

    const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < STICK_PX;
    let added = false;
    const ids = new Set(state.bubbles.map((b) => b.id));
    for (const [id, n] of nodes) {
      if (!ids.has(id)) {
        n.node.remove();
        nodes.delete(id);
      }
    }
    // Nodes are kept in state order, before the typing indicator (always last); existing ones stay put.
    let previous: Node = welcome;
    for (const [i, b] of state.bubbles.entries()) {
      const kind = b.role === 'status' && b.away ? 'away' : b.role !== 'confirmation' ? 'message' : b.outcome ? receiptKind(b) : 'pending';
      let n = nodes.get(b.id);
      if (!n || n.kind !== kind) {
        const fresh = build(b);
        if (n) n.node.replaceWith(fresh.node);
        else {
          // A final reply takes the place of its streamed row (which then leaves the log).
          streaming.placeOf(b.id)?.replaceWith(fresh.node);
          added = true;
        }
        n = fresh;
        nodes.set(b.id, n);
      }
      // The feedback controls are looked past: moving a message to get around them would announce it again.
      let after = previous.nextSibling;
      while (after === feedback.node) after = after.nextSibling;
      if (after !== n.node) log.insertBefore(n.node, after);
      previous = n.node;
      // One time per group: a message followed by the same sender's next one within minutes shows none of its own.
      const next = state.bubbles[i + 1];
      const grouped = !!next && isMessage(b) && next.role === b.role && next.author?.name === b.author?.name && next.at - b.at < GROUP_MS && next.at >= b.at;
      if (grouped !== n.node.hasAttribute('data-grouped')) n.node.toggleAttribute('data-grouped', grouped);
      if (b.role === 'user') {
        const id = b.id;
        setSendState(n.node, b.delivered !== false ? 'sent' : b.failed ? 'failed' : 'sending', ctx, () => handlers.onRetry(id));
      }
    }
    // The feedback controls follow the last message.
    if (previous.nextSibling !== feedback.node) log.insertBefore(feedback.node, previous.nextSibling);
    feedback.render(state);
    streaming.render(state.streaming);
    welcome.hidden = state.bubbles.length > 0 || state.streaming !== undefined;
    // The typing indicator shows until the first words of the reply do.
    typing.hidden = !state.typing || state.streaming !== undefined;
    // A person typing is named ("Ada is typing…"); the assistant is "Support".
    const who = state.typingAgent ? fill(s.agentTyping, { name: state.typingAgent }) : '';
    typingText.textContent = who || s.typing;
    typingWho.textContent = who;
    typingWho.hidden = !who;

    handoffBox.render(state);
    const reason = noticeText(state);
    notice.hidden = !reason;
    notice.textContent = reason;
    const ended = state.status === 'Disconnected';
    input.disabled = ended;
    send.disabled = ended;
    input.placeholder = ended ? s.placeholderDisabled : s.placeholder;
    const err = state.error && !ended ? errorText(s, state.error.code) : '';
    error.hidden = !err;
    error.textContent = err;
    if (added || nearBottom || state.typing) log.scrollTop = log.scrollHeight;
  };

  return {
    render,
    open,
    close: closePanel,
    destroy: () => {
      if (timeTimer) clearInterval(timeTimer);
      vv?.removeEventListener('resize', fitViewport);
      vv?.removeEventListener('scroll', fitViewport);
      host.remove();
    },
    host,
  };
}
