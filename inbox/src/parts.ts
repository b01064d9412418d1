// The sign-in form and the keyboard shortcuts' help.
import { h } from './dom.ts';

/** `submit` resolves with an error message, or undefined once signed in. */
export function signInForm(message: string | undefined, submit: (email: string, password: string) => Promise<string | undefined>): HTMLFormElement {
  const email = h('input', { type: 'email', id: 'email', 'data-testid': 'email-input', autocomplete: 'username', required: '' });
  const password = h('input', { type: 'password', id: 'password', 'data-testid': 'password-input', autocomplete: 'current-password', required: '' });
  const alert = h('p', { class: 'error', role: 'alert', 'data-testid': 'sign-in-error' }, message ?? '');
  const form = h(
    'form',
    { class: 'card', 'data-testid': 'sign-in-form' },
    h('h2', {}, 'Sign in'),
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password'),
    password,
    alert,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void submit(email.value.trim(), password.value).then((error) => {
      if (error === undefined) return;
      alert.textContent = error;
      password.value = '';
      password.focus();
    });
  });
  return form;
}

export const SHORTCUTS: [string, string][] = [
  ['j / k', 'Next / previous conversation'],
  ['r', 'Reply (focus the composer)'],
  ['e', 'Resolve the open conversation'],
  ['/', 'Search'],
  ['Enter', 'Send (Shift+Enter: new line)'],
  ['Esc', 'Leave the composer'],
  ['?', 'Show or hide these settings'],
];

export function shortcutsHelp(): HTMLElement {
  const dl = h('dl', { class: 'keys', 'data-testid': 'shortcuts' });
  for (const [k, what] of SHORTCUTS) dl.append(h('dt', {}, h('kbd', {}, k)), h('dd', {}, what));
  return h('section', { 'aria-label': 'Keyboard shortcuts' }, h('h3', {}, 'Keyboard'), dl);
}
