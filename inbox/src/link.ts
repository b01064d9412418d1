// A conversation's own address: /inbox#conversation=<id> (URL-encoded). The page keeps it in the address bar while the
// conversation is open, opens the one a loaded or changed address names, and copies it for "Copy link". A hash, not a
// path or a query: the server serves /inbox as it is, and the hash survives the sign-in form (drawn on the same page).
const KEY = 'conversation';

/** What the address names: nothing, a conversation's id, or something that cannot be one (empty, too long, control characters). */
export type Linked = { id: string } | { malformed: true } | undefined;

/** The server's own limit on an id (src/inbox/routes.ts). */
const MAX_ID = 256;

export function linkedConversation(hash: string = location.hash): Linked {
  // URLSearchParams decodes %-escapes (a broken one is kept as it is: it never throws).
  const raw = new URLSearchParams(hash.replace(/^#/, '')).get(KEY);
  if (raw === null) return undefined;
  // eslint-disable-next-line no-control-regex
  if (!raw.trim() || raw.length > MAX_ID || /[\u0000-\u001f\u007f]/.test(raw)) return { malformed: true };
  return { id: raw };
}

/** The full address of a conversation in this inbox. */
export const conversationUrl = (id: string) => `${location.origin}${location.pathname}#${KEY}=${encodeURIComponent(id)}`;

/**
 * Puts the open conversation in the address bar. replaceState, not pushState: the inbox moves through conversations a
 * keypress at a time (j/k), and an entry per conversation would make Back walk through every one of them before it
 * left the inbox; Back leaves the page, as it did. (replaceState fires no hashchange: the page does not reopen it.)
 */
export function showInAddress(id: string | undefined) {
  const url = id ? conversationUrl(id) : `${location.pathname}${location.search}`;
  if (url !== location.href) history.replaceState(history.state, '', url);
}

/** Copies a conversation's link; the sentence to announce. Without clipboard access the address bar holds it still. */
export async function copyLink(id: string): Promise<string> {
  try {
    await navigator.clipboard.writeText(conversationUrl(id));
    return 'Link copied.';
  } catch {
    return 'The browser did not allow copying: the link is in the address bar.';
  }
}
