// The page's frame once signed in: the top bar, the left column (views, search, settings, presence), the list, the
// conversation, the customer panel and the toast. The parts drawn again and again are slots.
import { h } from './dom.ts';
import { shortcutsHelp } from './parts.ts';

export interface Shell {
  root: HTMLElement[];
  toast: HTMLElement;
  liveState: HTMLElement;
  presence: HTMLElement;
  /** Says why presence is not shown (the live feed is down); empty otherwise. */
  presenceNote: HTMLElement;
  navSlot: HTMLElement;
  search: HTMLInputElement;
  listSlot: HTMLElement;
  convSlot: HTMLElement;
  sideSlot: HTMLElement;
  settings: HTMLDetailsElement;
  signOut: HTMLButtonElement;
}

export function createShell(name: string, alertSettings: HTMLElement): Shell {
  const toast = h('p', { class: 'toast', role: 'status', 'data-testid': 'toast' });
  const liveState = h('span', { class: 'live', 'data-testid': 'live-state' }, 'Connecting…');
  const presence = h('ul', { class: 'presence', 'aria-label': 'Agents', 'data-testid': 'presence' });
  const presenceNote = h('p', { class: 'hint presence-note', 'data-testid': 'presence-note' });
  const navSlot = h('div', { class: 'nav-slot' });
  const search = h('input', { type: 'search', id: 'search', 'data-testid': 'search', placeholder: 'Email, id, phone or words' });
  const listSlot = h('div', { class: 'list-slot' });
  const convSlot = h(
    'section',
    { class: 'conversation', 'aria-label': 'Conversation', 'data-testid': 'conversation' },
    h('p', { class: 'empty' }, 'Choose a conversation (j/k).'),
  );
  // It scrolls when the customer's details are taller than the room (1,024 × 768): focusable, so keys scroll it too.
  const sideSlot = h('div', { class: 'side-slot', role: 'region', 'aria-label': 'Customer details', tabindex: '0', 'data-testid': 'side-slot' });
  const settings = h('details', { class: 'settings' }, h('summary', {}, 'Settings'), alertSettings, shortcutsHelp());
  const signOut = h('button', { type: 'button', class: 'link', 'data-testid': 'sign-out' }, 'Sign out');
  const root = [
    h('header', { class: 'top' }, h('h1', {}, 'Parley inbox'), liveState, h('span', { class: 'me', 'data-testid': 'me' }, name), signOut),
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
        presenceNote,
        presence,
      ),
      h('main', { class: 'middle' }, h('h2', { class: 'sr' }, 'Conversations'), listSlot),
      convSlot,
      sideSlot,
    ),
    toast,
  ];
  return { root, toast, liveState, presence, presenceNote, navSlot, search, listSlot, convSlot, sideSlot, settings, signOut };
}
