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
  return h('section', { 'aria-label': 'Keyboard shortcuts' }, h('h2', { class: 'minor' }, 'Keyboard'), dl);
}

/** Admins add people to the team here: the new account's one-time link is shown to pass on. */
export function addAgentForm(create: (name: string, email: string, role: 'agent' | 'admin') => Promise<string>): HTMLElement {
  const name = h('input', { type: 'text', id: 'new-agent-name', 'data-testid': 'new-agent-name', required: '', autocomplete: 'off' });
  const email = h('input', { type: 'email', id: 'new-agent-email', 'data-testid': 'new-agent-email', required: '', autocomplete: 'off' });
  const role = h('select', { id: 'new-agent-role' }, h('option', { value: 'agent' }, 'Agent'), h('option', { value: 'admin' }, 'Admin'));
  const out = h('p', { class: 'hint', role: 'status', 'data-testid': 'new-agent-link' });
  const form = h(
    'form',
    { class: 'add-agent', 'aria-label': 'Add an agent' },
    h('h2', { class: 'minor' }, 'Add an agent'),
    h('label', { for: 'new-agent-name' }, 'Name'),
    name,
    h('label', { for: 'new-agent-email' }, 'Email'),
    email,
    h('label', { for: 'new-agent-role' }, 'Role'),
    role,
    h('button', { type: 'submit' }, 'Add'),
    out,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void create(name.value.trim(), email.value.trim(), role.value === 'admin' ? 'admin' : 'agent').then((text) => {
      out.textContent = text;
      if (text.startsWith('Send')) form.reset();
    });
  });
  return form;
}
