// While the customer waits for a person: what to expect (the team is away and back at…, the usual wait, no one free
// yet) and the small email form a `handoff_notice` with `askEmail` offers. Text only through textContent.
import { el, type NodeContext } from './nodes.ts';
import type { WidgetState } from './state.ts';
import { errorText, fill } from './strings.ts';
import { backAtTime, waitMinutes } from './time.ts';

export interface HandoffBox {
  readonly node: HTMLElement;
  render(state: WidgetState): void;
}

function noticeText(state: WidgetState, c: NodeContext): string {
  const n = state.handoff;
  const s = c.strings;
  if (!n) return '';
  if (n.kind === 'offline') return s.handoffOffline;
  if (n.kind === 'closed') return n.backAt === undefined ? s.handoffClosedUnknown : fill(s.handoffClosed, { when: backAtTime(n.backAt, c.locale) });
  return n.expectedWaitMs === undefined ? '' : fill(s.handoffWait, { n: waitMinutes(n.expectedWaitMs) });
}

/** `onContact` sends the address; false when it could not be sent (the form stays as it is). */
export function createHandoffBox(c: NodeContext, onContact: (email: string) => boolean): HandoffBox {
  const s = c.strings;
  const node = el('div', { class: 'handoff', 'data-testid': 'handoff-notice', hidden: '' });
  const text = el('p', { class: 'handoff-text', role: 'status', 'data-testid': 'handoff-text' });
  const form = el('form', { class: 'email-form', 'data-testid': 'email-form', novalidate: '', hidden: '' });
  const ask = el('p', { class: 'email-ask', id: 'parley-email-ask' }, s.emailAsk);
  const label = el('label', { for: 'parley-email' }, s.emailLabel);
  const input = el('input', {
    id: 'parley-email',
    type: 'email',
    dir: 'auto',
    autocomplete: 'email',
    inputmode: 'email',
    required: '',
    maxlength: '320',
    'aria-describedby': 'parley-email-ask parley-email-error',
    'data-testid': 'email-input',
  });
  const button = el('button', { type: 'submit', class: 'email-send', 'data-testid': 'email-send' }, s.emailSend);
  const row = el('div', { class: 'email-row' });
  row.append(input, button);
  const error = el('p', { class: 'email-error', id: 'parley-email-error', role: 'alert', 'data-testid': 'email-error', hidden: '' });
  form.append(ask, label, row, error);
  const saved = el('p', { class: 'email-saved', role: 'status', 'data-testid': 'email-saved', hidden: '' });
  node.append(text, form, saved);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const email = input.value.trim();
    if (!email || !input.checkValidity()) {
      error.hidden = false;
      error.textContent = s.errorInvalidEmail;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    if (onContact(email)) button.disabled = true;
  });

  return {
    node,
    render(state) {
      const words = noticeText(state, c);
      const stored = state.contact?.email;
      const asking = !!state.handoff?.askEmail && !stored;
      const showSaved = !!stored && !!state.handoff && state.handoff.kind !== 'open';
      if (text.textContent !== words) text.textContent = words;
      text.hidden = !words;
      form.hidden = !asking;
      button.disabled = !!state.contact?.pending;
      const refused = state.contact?.error;
      if (refused) {
        error.hidden = false;
        error.textContent = refused === 'invalid_email' ? s.errorInvalidEmail : errorText(s, refused);
        input.setAttribute('aria-invalid', 'true');
      } else if (state.contact?.pending) {
        error.hidden = true;
        input.removeAttribute('aria-invalid');
      }
      saved.hidden = !showSaved;
      if (showSaved) saved.textContent = fill(s.emailSaved, { email: stored! });
      node.hidden = !words && !asking && !showSaved;
    },
  };
}
