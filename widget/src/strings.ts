// Every word the customer sees. English lives here, in the bundle; each other language is a table of its own
// (strings-es.ts, …, locale-tables.ts lists them) that the build writes to public/build/widget-locale-<lang>.json and
// the widget fetches when a page asks for it (locales.ts). `{name}` placeholders are filled by `fill`.
// A host page picks the language with `locale` and may replace any string with `strings`.

export interface Strings {
  title: string;
  subtitle: string;
  openChat: string;
  openChatUnread1: string;
  openChatUnreadN: string;
  closeChat: string;
  dialogLabel: string;
  statusConnecting: string;
  statusConnected: string;
  statusReconnecting: string;
  statusDisconnected: string;
  messagesLabel: string;
  welcome: string;
  inputLabel: string;
  placeholder: string;
  placeholderDisabled: string;
  send: string;
  you: string;
  support: string;
  update: string;
  typing: string;
  /** A person of the team typing ({name}). */
  agentTyping: string;
  sending: string;
  /** A message the server refused (not stored), and the button that sends it again. */
  notSent: string;
  retry: string;
  /** Under the input when the text is longer than a message may be ({n} characters of {max}). */
  tooLongCount: string;
  justNow: string;
  newMessages1: string;
  newMessagesN: string;
  confirmTitle: string;
  confirmQuestion: string;
  confirmAnnounce: string;
  approve: string;
  decline: string;
  receiptApproved: string;
  receiptDeclined: string;
  receiptExpired: string;
  /** A person took the conversation over while the card waited: nothing was done. */
  receiptCancelled: string;
  noticeReconnecting: string;
  noticeSessionEnded: string;
  noticeRefreshing: string;
  /** The customer wrote while a confirmation card waits: the card comes first, the message is answered after it. */
  noticeConfirmFirst: string;
  /** Status lines of a human handoff. */
  statusHuman: string;
  statusHumanAway: string;
  statusAgentJoined: string;
  statusAssistant: string;
  /** While waiting for a person: outside opening hours ({when}: the next opening), the usual wait, no one free yet. */
  handoffClosed: string;
  handoffClosedUnknown: string;
  handoffWait: string;
  handoffOffline: string;
  /** The email form, and what it says once an address is stored ({email}). */
  emailAsk: string;
  emailLabel: string;
  emailSend: string;
  emailSaved: string;
  errorInvalidEmail: string;
  agentFallback: string;
  /** Under a reply that cites help articles: the list's heading, and a chip's label for screen readers ({n}: its number). */
  sources: string;
  sourceChip: string;
  noticeOriginRefused: string;
  errorGeneric: string;
  errorNotSent: string;
  errorRateLimited: string;
  errorUnavailable: string;
  errorUnknownConfirmation: string;
  errorTooLong: string;
  /** Feedback (docs/outcomes.md): under the latest answer, and the rating card. `{n}`: a score of 5. */
  feedbackQuestion: string;
  feedbackYes: string;
  feedbackNo: string;
  feedbackThanks: string;
  talkToPerson: string;
  ratingTitle: string;
  ratingScore: string;
  ratingComment: string;
  ratingSend: string;
  ratingThanks: string;
}

/** English: the bundle's own words, and the fallback for any key a loaded table lacks. */
export const en: Strings = {
  title: 'Support',
  subtitle: 'Typically replies in minutes',
  openChat: 'Open chat',
  openChatUnread1: 'Open chat, 1 new message',
  openChatUnreadN: 'Open chat, {n} new messages',
  closeChat: 'Close chat',
  dialogLabel: 'Chat with support',
  statusConnecting: 'Connecting',
  statusConnected: 'Online',
  statusReconnecting: 'Reconnecting',
  statusDisconnected: 'Disconnected',
  messagesLabel: 'Messages',
  welcome: 'Hi! How can we help you today?',
  inputLabel: 'Type your message',
  placeholder: 'Type your message…',
  placeholderDisabled: 'Chat is unavailable',
  send: 'Send',
  you: 'You',
  support: 'Support',
  update: 'Update',
  typing: 'Support is typing…',
  agentTyping: '{name} is typing…',
  sending: 'Sending…',
  notSent: 'Not sent',
  retry: 'Retry',
  tooLongCount: '{n} / {max} characters: too long to send',
  justNow: 'just now',
  newMessages1: '1 new message from Support',
  newMessagesN: '{n} new messages from Support',
  confirmTitle: 'Please confirm',
  confirmQuestion: '{summary}?',
  confirmAnnounce: 'Please confirm: {summary}? Approve and Decline buttons follow the messages.',
  approve: 'Approve',
  decline: 'Decline',
  receiptApproved: 'You approved: {summary}',
  receiptDeclined: 'You declined: {summary}',
  receiptExpired: 'Not confirmed in time: {summary}',
  receiptCancelled: 'Cancelled: a person is taking over ({summary})',
  noticeReconnecting: 'Connection lost. Reconnecting… Messages you send now go out once we are back.',
  noticeSessionEnded: 'Your session has ended. Please reload the page to keep chatting.',
  noticeRefreshing: 'Signing you in again…',
  noticeConfirmFirst: 'Please answer the question above first ({approve} or {decline}): your message will be answered after that.',
  statusHuman: 'A person from our team will join you here shortly.',
  statusHumanAway: 'Your conversation is with our team now.',
  statusAgentJoined: '{name} joined the conversation',
  statusAssistant: 'You are chatting with the assistant again.',
  handoffClosed: 'Our team is away right now and back {when}.',
  handoffClosedUnknown: 'Our team is away right now.',
  handoffWait: 'A person usually replies within {n} min.',
  handoffOffline: 'No one from our team is free right now. We will reply here as soon as someone is.',
  emailAsk: 'Leave your email address and we will reply there too, so you do not need to wait here.',
  emailLabel: 'Your email address',
  emailSend: 'Send',
  emailSaved: 'Thanks! We will reply to {email} or here.',
  errorInvalidEmail: 'Please enter a valid email address.',
  agentFallback: 'Support agent',
  sources: 'Sources',
  sourceChip: 'Source {n}',
  noticeOriginRefused: 'Chat is not available on this website.',
  errorGeneric: 'Something went wrong. Please try again.',
  errorNotSent: 'You are offline, so your answer was not sent. Try again once you are connected.',
  errorRateLimited: 'You are sending messages very quickly. Please wait a moment and try again.',
  errorUnavailable: 'We could not save that just now. Please send it again.',
  errorUnknownConfirmation: 'That request was already answered or has expired.',
  errorTooLong: 'That message is too long. Please shorten it.',
  feedbackQuestion: 'Did that answer your question?',
  feedbackYes: 'Yes',
  feedbackNo: 'No',
  feedbackThanks: 'Thanks for letting us know.',
  talkToPerson: 'Talk to a person',
  ratingTitle: 'How would you rate this conversation?',
  ratingScore: '{n} out of 5',
  ratingComment: 'Anything to add? (optional)',
  ratingSend: 'Send rating',
  ratingThanks: 'Thank you for your rating!',
};

/**
 * The strings the widget shows: English, then the loaded table of the chosen language (locales.ts) over it, then the
 * page's own `strings`. Only keys English has, and only strings, are taken from either: a table or a page cannot add
 * anything else.
 */
export function createStrings(table: object = {}, overrides: Partial<Strings> = {}): Strings {
  const out = Object.assign({}, en);
  for (const layer of [table, overrides])
    for (const [k, v] of Object.entries(layer)) if (typeof v === 'string' && Object.prototype.hasOwnProperty.call(en, k)) out[k as keyof Strings] = v;
  return out;
}

export const fill = (template: string, vars: Record<string, string | number>): string =>
  template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));

/** Server error codes → what the customer reads. The code itself goes to the console. */
export function errorText(s: Strings, code: string): string {
  switch (code) {
    case 'rate_limited':
      return s.errorRateLimited;
    case 'unavailable':
      return s.errorUnavailable;
    case 'unknown_confirmation':
      return s.errorUnknownConfirmation;
    case 'not_sent':
      return s.errorNotSent;
    case 'too_long':
      return s.errorTooLong;
    case 'nothing_to_rate':
      return s.errorGeneric;
    case 'unauthorized':
      return s.noticeSessionEnded;
    case 'forbidden_origin':
      return s.noticeOriginRefused;
    default:
      return s.errorGeneric;
  }
}
