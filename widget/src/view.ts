// The DOM of the widget, inside an open shadow root. Text is always set with
// textContent: nothing from the server is ever parsed as HTML.
import type { WidgetState } from './state.ts';
import { createStreamingBubble } from './streaming-view.ts';
import { STYLES } from './styles.ts';

export interface ViewHandlers {
  onSend(text: string): void;
  /** Returns false when the answer could not be sent (the prompt stays usable). */
  onAnswer(id: string, approve: boolean): boolean;
  onPanel(open: boolean): void;
}

export interface View {
  render(state: WidgetState): void;
  open(): void;
  close(): void;
  destroy(): void;
  readonly host: HTMLElement;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

const CHAT_ICON =
  '<svg viewBox="0 0 24 24" fill="currentColor" aria-hidden="true"><path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z"/></svg>';

export function createView(container: HTMLElement | undefined, handlers: ViewHandlers): View {
  const host = el('div', { id: 'parley-widget' });
  (container ?? document.body).appendChild(host);
  const root = host.attachShadow({ mode: 'open' });
  const style = el('style');
  style.textContent = STYLES;
  const wrap = el('div', { class: 'pw' });

  const launcher = el('button', { class: 'launcher', type: 'button', 'aria-label': 'Open chat', 'aria-expanded': 'false', 'data-testid': 'launcher' });
  launcher.innerHTML = CHAT_ICON; // static markup, no data
  const badge = el('span', { class: 'badge', 'aria-hidden': 'true', 'data-testid': 'unread', hidden: '' });
  launcher.append(badge);
  const panel = el('div', { class: 'panel', role: 'dialog', 'aria-label': 'Chat with support', 'aria-modal': 'false', hidden: '' });
  const head = el('div', { class: 'head' });
  const title = el('span', { class: 'title' }, 'Support');
  const dot = el('span', { class: 'dot', 'aria-hidden': 'true', 'data-state': 'Connecting' }, '●');
  const status = el('span', { class: 'status', 'data-testid': 'status', role: 'status' }, 'Connecting');
  const close = el('button', { class: 'close', type: 'button', 'aria-label': 'Close chat' }, '×');
  head.append(title, dot, status, close);
  const log = el('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Messages', 'data-testid': 'messages' });
  const typing = el('div', { class: 'typing', 'data-testid': 'typing', hidden: '', 'aria-live': 'polite' }, 'Support is typing…');
  const error = el('div', { class: 'error', role: 'alert', 'data-testid': 'error', hidden: '' });
  const form = el('form');
  const label = el('label', { class: 'sr', for: 'parley-input' }, 'Type your message');
  const input = el('input', {
    id: 'parley-input',
    type: 'text',
    autocomplete: 'off',
    placeholder: 'Type your message',
    'data-testid': 'input',
    maxlength: '4000',
  });
  const send = el('button', { class: 'send', type: 'submit', 'data-testid': 'send' }, 'Send');
  form.append(label, input, send);
  // Announcements that are not in the log: a prompt waiting for an answer, news while the panel is closed.
  const announcer = el('div', { class: 'sr', role: 'status', 'aria-live': 'polite', 'data-testid': 'announcer' });
  panel.append(head, log, error, form);
  wrap.append(panel, launcher, announcer);
  root.append(style, wrap);

  const bubbles = new Map<string, HTMLElement>();
  let confirmNode: HTMLElement | undefined;
  let confirmId: string | undefined;
  let unread = 0;

  const launcherLabel = () => {
    if (!panel.hidden) return 'Close chat';
    return unread ? `Open chat, ${unread} new message${unread === 1 ? '' : 's'}` : 'Open chat';
  };
  const open = () => {
    panel.hidden = false;
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', launcherLabel());
    handlers.onPanel(true);
    input.focus();
  };
  const closePanel = () => {
    panel.hidden = true;
    launcher.setAttribute('aria-expanded', 'false');
    handlers.onPanel(false);
    launcher.focus();
  };

  launcher.addEventListener('click', () => (panel.hidden ? open() : closePanel()));
  close.addEventListener('click', closePanel);
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') closePanel();
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    handlers.onSend(text);
  });

  log.append(typing);
  const streaming = createStreamingBubble(log, typing);

  const render = (state: WidgetState) => {
    status.textContent = state.status;
    status.setAttribute('data-state', state.status);
    dot.setAttribute('data-state', state.status);
    if (state.unread > unread) announcer.textContent = `${state.unread} new message${state.unread === 1 ? '' : 's'} from Support`;
    unread = state.unread;
    badge.hidden = unread === 0;
    badge.textContent = unread > 9 ? '9+' : String(unread);
    launcher.setAttribute('aria-label', launcherLabel());
    // New nodes go in before the typing indicator (always last); existing ones stay put.
    const ids = new Set(state.bubbles.map((b) => b.id));
    for (const [id, node] of bubbles) {
      if (!ids.has(id)) {
        node.remove();
        bubbles.delete(id);
      }
    }
    for (const b of state.bubbles) {
      let node = bubbles.get(b.id);
      if (!node) {
        node = el('div', { class: 'msg', 'data-testid': 'message', 'data-role': b.role });
        node.append(el('span', { class: 'sr' }, b.role === 'user' ? 'You: ' : 'Support: '));
        if (b.proactive) node.append(el('span', { class: 'tag' }, 'Update'), el('span', { class: 'sr' }, ': '));
        node.append(el('span', { class: 'text' }, b.text));
        bubbles.set(b.id, node);
        // A final reply takes the place of its streamed bubble (removed just below).
        log.insertBefore(node, streaming.placeOf(b.id) ?? typing);
      }
      if (b.role === 'user') node.setAttribute('data-delivered', String(b.delivered !== false));
    }
    if (!state.confirm && confirmNode) {
      confirmNode.remove();
      confirmNode = confirmId = undefined;
    }
    if (state.confirm && state.confirm.id !== confirmId) {
      confirmNode?.remove();
      confirmId = state.confirm.id;
      const id = state.confirm.id;
      const text = `Confirm: ${state.confirm.summary}?`;
      confirmNode = el('div', { class: 'confirm', 'data-testid': 'confirm', role: 'group', 'aria-label': 'Confirm action' });
      const question = el('p', {}, text);
      const approve = el('button', { class: 'approve', type: 'button', 'data-testid': 'approve' }, 'Approve');
      const decline = el('button', { class: 'decline', type: 'button', 'data-testid': 'decline' }, 'Decline');
      // Focus goes back to the input once the answer is sent; if it was not, the error says why.
      const answer = (approved: boolean) => {
        if (handlers.onAnswer(id, approved)) input.focus();
      };
      approve.addEventListener('click', () => answer(true));
      decline.addEventListener('click', () => answer(false));
      confirmNode.append(question, approve, decline);
      log.insertBefore(confirmNode, typing);
      // Focus is never moved here: a customer still typing must not land on Approve. The prompt is
      // announced and reachable with Tab.
      announcer.textContent = `${text} Approve and Decline buttons follow the messages.`;
    }
    if (confirmNode && state.confirm?.answered) confirmNode.querySelectorAll('button').forEach((b) => (b.disabled = true));
    streaming.render(state.streaming);
    // The typing indicator shows until the first words of the reply do.
    typing.hidden = !state.typing || state.streaming !== undefined;
    error.hidden = !state.error;
    error.textContent = state.error ?? '';
    log.scrollTop = log.scrollHeight;
  };

  return { render, open, close: closePanel, destroy: () => host.remove(), host };
}
