/** Creates an element; text is always set with textContent. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | undefined)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) if (c !== undefined) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
}

export const fmtTime = (at: number) => new Date(at).toLocaleString();
export const fmtMs = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? '–' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;

/** "just now", "5 min ago", "3 h ago", "2 d ago". */
export function fmtAgo(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

/** A duration for people: milliseconds below a second (an assistant's first answer often is), tenths below 10 s,
 * then seconds, minutes, hours or days. */
export function fmtDuration(ms: number | null): string {
  if (ms === null) return '–';
  const s = ms / 1000;
  if (s < 1) return fmtMs(ms);
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86_400) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} d`;
}

/** A conversation's state (the conversation machine's) as people say it; an unknown one as it is. */
const STATE_WORDS: Record<string, string> = {
  idle: 'idle',
  gathering: 'reading messages',
  starting: 'starting',
  thinking: 'thinking',
  nextCall: 'calling a function',
  callingTool: 'calling a function',
  awaitingConfirmation: 'awaiting confirmation',
  replying: 'replying',
  withHuman: 'with a person',
};
export const stateWords = (state: string) => STATE_WORDS[state] ?? state;

/** A conversation's customer, linked to the conversation in the agent inbox (/inbox#conversation=<id>, a person signs in there). */
export const inboxLink = (conversationId: string, text: string) =>
  h(
    'a',
    { href: `/inbox#conversation=${encodeURIComponent(conversationId)}`, 'data-testid': 'inbox-link', title: `Open in the inbox (${conversationId})` },
    text,
  );
