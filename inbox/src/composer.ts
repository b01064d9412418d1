// The composer: Enter sends, Shift+Enter starts a new line; "Reply" goes to the customer under the agent's name,
// "Internal note" only to the team. Typing `/` and a saved reply's shortcut offers it (Tab or Enter inserts it). While
// the agent types a reply the customer's widget shows "<name> is typing…" (sent at most every few seconds, and
// stopped after a pause or on send).
import type { SavedReplyView } from './api.ts';
import { h } from './dom.ts';

const TYPING_EVERY_MS = 3000;
const TYPING_STOPS_AFTER_MS = 5000;

export interface ComposerDeps {
  send(text: string, note: boolean): Promise<boolean>;
  typing(on: boolean): void;
  replies(): SavedReplyView[];
}

export interface Composer {
  root: HTMLElement;
  focus(): void;
  /** `why` (e.g. "Cleo has this conversation…"): the agent may not reply here, only write internal notes; undefined: may reply. */
  notesOnly(why: string | undefined): void;
}

export function createComposer(d: ComposerDeps): Composer {
  const input = h('textarea', {
    id: 'composer',
    rows: '3',
    'data-testid': 'composer',
    placeholder: 'Reply… (Enter sends, Shift+Enter new line, / for saved replies)',
  });
  const noteBox = h('input', { type: 'checkbox', id: 'note-mode', 'data-testid': 'note-mode' });
  const send = h('button', { type: 'submit', class: 'primary', 'data-testid': 'send' }, 'Send');
  const suggestions = h('ul', { class: 'suggestions', id: 'suggestions', role: 'listbox', 'aria-label': 'Saved replies', hidden: '' });
  const hint = h('p', { class: 'hint', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'composer', 'aria-label': 'Reply' },
    h('label', { for: 'composer', class: 'sr' }, 'Message'),
    suggestions,
    input,
    h('div', { class: 'row' }, h('div', { class: 'check' }, noteBox, h('label', { for: 'note-mode' }, 'Internal note (only agents see it)')), hint, send),
  );
  let typingSince = 0;
  let stopTimer: ReturnType<typeof setTimeout> | undefined;
  let matches: SavedReplyView[] = [];

  const stopTyping = () => {
    if (stopTimer) clearTimeout(stopTimer);
    stopTimer = undefined;
    if (typingSince) d.typing(false);
    typingSince = 0;
  };
  const showSuggestions = () => {
    const m = /^\/([a-z0-9-]*)$/i.exec(input.value);
    matches = m ? d.replies().filter((r) => r.shortcut.startsWith(m[1].toLowerCase())) : [];
    suggestions.replaceChildren(
      ...matches.map((r, i) =>
        h('li', { role: 'option', 'aria-selected': i === 0 ? 'true' : 'false' }, `/${r.shortcut} — ${r.text.length > 80 ? `${r.text.slice(0, 79)}…` : r.text}`),
      ),
    );
    suggestions.hidden = matches.length === 0;
  };
  const insert = (r: SavedReplyView) => {
    input.value = r.text;
    showSuggestions();
  };
  suggestions.addEventListener('mousedown', (e) => {
    const li = (e.target as HTMLElement).closest('li');
    const i = li ? [...suggestions.children].indexOf(li) : -1;
    if (i >= 0) {
      e.preventDefault();
      insert(matches[i]);
      input.focus();
    }
  });
  const submit = async () => {
    const text = input.value.trim();
    if (!text || send.disabled) return;
    send.disabled = true;
    const note = noteBox.checked;
    if (!note) stopTyping();
    if (await d.send(text, note)) {
      input.value = '';
      hint.textContent = note ? 'Note saved.' : 'Sent.';
    }
    send.disabled = false;
    input.focus();
  };
  input.addEventListener('keydown', (e) => {
    if ((e.key === 'Tab' || e.key === 'Enter') && matches.length && !e.shiftKey) {
      e.preventDefault();
      return insert(matches[0]);
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void submit();
    }
    if (e.key === 'Escape') input.blur();
  });
  input.addEventListener('input', () => {
    showSuggestions();
    if (noteBox.checked || !input.value.trim()) return stopTyping();
    const now = Date.now();
    if (now - typingSince > TYPING_EVERY_MS) {
      typingSince = now;
      d.typing(true);
    }
    if (stopTimer) clearTimeout(stopTimer);
    stopTimer = setTimeout(stopTyping, TYPING_STOPS_AFTER_MS);
  });
  const noteMode = () => {
    form.classList.toggle('noting', noteBox.checked);
    input.placeholder = noteBox.checked ? 'Internal note… (only agents see it)' : 'Reply… (Enter sends, Shift+Enter new line, / for saved replies)';
    if (noteBox.checked) stopTyping();
  };
  noteBox.addEventListener('change', noteMode);
  let onlyNotes: string | undefined;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void submit();
  });
  return {
    root: form,
    focus: () => input.focus(),
    notesOnly(why) {
      if (why === onlyNotes) return;
      noteBox.checked = why !== undefined;
      onlyNotes = why;
      noteBox.disabled = why !== undefined;
      hint.textContent = why ?? '';
      noteMode();
    },
  };
}
