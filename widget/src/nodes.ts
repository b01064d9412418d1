// The transcript's pieces: a message row, a confirmation card, its receipt. Text only through textContent.
import { renderMarkdown } from './markdown.ts';
import { addSourceChips, sourcesNode } from './sources.ts';
import type { Bubble } from './state.ts';
import { fill, type Strings } from './strings.ts';
import { exactTime, relativeTime } from './time.ts';

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

export interface NodeContext {
  strings: Strings;
  locale: string;
  now: () => number;
}

/** A time: relative text, the exact time on hover (and for screen readers). Not a tab stop: nothing to do there. */
export function timeNode(at: number, c: NodeContext): HTMLElement {
  const exact = exactTime(at, c.locale);
  const t = el('time', {
    class: 'time',
    'data-testid': 'time',
    datetime: new Date(at).toISOString(),
    'data-at': String(at),
    'data-exact': exact,
  });
  t.setAttribute('aria-label', exact);
  t.textContent = relativeTime(at, c.now(), c.locale, c.strings.justNow);
  return t;
}

/** Rewrites every relative time in `root` (they age while the panel is open). */
export function refreshTimes(root: ParentNode, c: NodeContext) {
  root.querySelectorAll<HTMLElement>('time[data-at]').forEach((t) => {
    if (t.closest('[data-delivered=false]')) return;
    const text = relativeTime(Number(t.getAttribute('data-at')), c.now(), c.locale, c.strings.justNow);
    if (t.textContent !== text) t.textContent = text;
  });
}

/**
 * The reply being written: an assistant row like `messageNode`'s, without the time (the final message brings it),
 * `aria-hidden` so screen readers hear the reply once, when its final message takes this row's place.
 */
export function streamingNode(): { row: HTMLElement; text: HTMLElement } {
  const row = el('div', { class: 'row streaming', 'data-testid': 'streaming', 'data-role': 'assistant', 'aria-hidden': 'true' });
  const bubble = el('div', { class: 'msg' });
  const text = el('span', { class: 'text', dir: 'auto' });
  bubble.append(text);
  row.append(bubble);
  return { row, text };
}

export function messageNode(b: Bubble, c: NodeContext): HTMLElement {
  const row = el('div', { class: 'row', 'data-testid': 'message', 'data-role': b.role });
  const agent = b.role === 'agent' ? b.author?.name || c.strings.agentFallback : undefined;
  if (agent) row.append(el('span', { class: 'author', 'data-testid': 'author' }, agent));
  else row.append(el('span', { class: 'sr' }, `${b.role === 'user' ? c.strings.you : c.strings.support}: `));
  const bubble = el('div', { class: 'msg' });
  if (b.proactive) bubble.append(el('span', { class: 'tag' }, c.strings.update), el('span', { class: 'sr' }, ': '));
  // `dir="auto"`: each message runs the way its own words do (an English reply in an Arabic widget stays left to right).
  if (b.role === 'user') bubble.append(el('span', { class: 'text', dir: 'auto' }, b.text));
  else {
    // Replies (the assistant's, a person's, proactive updates): a safe subset of Markdown, built as DOM nodes.
    const text = el('div', { class: 'text md', dir: 'auto' });
    text.append(renderMarkdown(b.text));
    bubble.append(text);
    if (b.role === 'assistant' && b.sources?.length) {
      addSourceChips(text, b.sources, c.strings);
      bubble.append(sourcesNode(text.ownerDocument, b.sources, c.strings));
    }
  }
  row.append(bubble, timeNode(b.at, c));
  return row;
}

/** A line saying who answers now: a person will join, a person joined, the assistant is back. */
export function statusNode(b: Bubble, c: NodeContext): HTMLElement {
  const text =
    b.mode === 'assistant'
      ? c.strings.statusAssistant
      : b.author
        ? fill(c.strings.statusAgentJoined, { name: b.author.name })
        : b.away
          ? c.strings.statusHumanAway
          : c.strings.statusHuman;
  const node = el('div', { class: 'status-line', 'data-testid': 'status-line', 'data-mode': b.mode ?? 'assistant', role: 'note' });
  node.append(el('span', { class: 'what' }, text));
  return node;
}

export type SendState = 'sending' | 'sent' | 'failed';

/**
 * Marks a user row sent, sending ("Sending…" until the server has stored it) or not sent ("Not sent · Retry"; the
 * button calls `retry`). `data-delivered` stays for the sent/not-yet-sent distinction.
 */
export function setSendState(row: HTMLElement, state: SendState, c: NodeContext, retry: () => void) {
  if (row.getAttribute('data-state') === state) return;
  row.setAttribute('data-state', state);
  row.setAttribute('data-delivered', String(state === 'sent'));
  row.querySelector('.sendstate')?.remove();
  const time = row.querySelector<HTMLElement>('.time');
  if (time) time.hidden = state !== 'sent';
  if (time && state === 'sent') time.textContent = relativeTime(Number(time.getAttribute('data-at')), c.now(), c.locale, c.strings.justNow);
  if (state === 'sent') return;
  const line = el(
    'span',
    { class: 'sendstate', 'data-testid': 'send-state', 'data-state': state },
    state === 'sending' ? c.strings.sending : c.strings.notSent,
  );
  if (state === 'failed') {
    const button = el('button', { class: 'retry', type: 'button', 'data-testid': 'retry' }, c.strings.retry);
    button.addEventListener('click', retry);
    line.append(button);
  }
  row.append(line);
}

const MARKS = { approved: '✓', denied: '✕', expired: '!', cancelled: '→' } as const;
const TEMPLATES = { approved: 'receiptApproved', denied: 'receiptDeclined', expired: 'receiptExpired', cancelled: 'receiptCancelled' } as const;

/** What a receipt shows: the answer, and for an approved action that ran, its result (`done` or `failed`). */
export const receiptKind = (b: Bubble): string => (b.outcome === 'approved' && b.receipt ? (b.receipt.ok ? 'done' : 'failed') : (b.outcome ?? 'expired'));

export function receiptNode(b: Bubble, c: NodeContext): HTMLElement {
  const outcome = b.outcome ?? 'expired';
  const kind = receiptKind(b);
  // Approved and not yet run: the answer only, in neutral colours (the result follows in its place).
  const text = b.receipt && outcome === 'approved' ? b.receipt.text : fill(c.strings[TEMPLATES[outcome]], { summary: b.text });
  const mark = kind === 'failed' ? '✕' : MARKS[outcome];
  const node = el('div', { class: 'receipt', 'data-testid': 'receipt', 'data-outcome': kind, role: 'note' });
  if (kind === 'failed') node.setAttribute('role', 'alert');
  node.append(el('span', { class: 'mark', 'aria-hidden': 'true' }, mark), el('span', { class: 'what' }, text), timeNode(b.at, c));
  return node;
}

export function confirmNode(b: Bubble, c: NodeContext, answer: (approve: boolean) => void): HTMLElement {
  const question = fill(c.strings.confirmQuestion, { summary: b.text });
  const node = el('div', { class: 'confirm', 'data-testid': 'confirm', role: 'group', 'aria-label': c.strings.confirmTitle });
  const approve = el('button', { class: 'approve', type: 'button', 'data-testid': 'approve' }, c.strings.approve);
  const decline = el('button', { class: 'decline', type: 'button', 'data-testid': 'decline' }, c.strings.decline);
  approve.addEventListener('click', () => answer(true));
  decline.addEventListener('click', () => answer(false));
  const actions = el('div', { class: 'actions' });
  actions.append(approve, decline);
  node.append(el('p', { class: 'kicker' }, c.strings.confirmTitle), el('p', { class: 'question' }, question), actions);
  return node;
}
