// Every word the customer sees, per language. `{name}` placeholders are filled by `fill`.
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
  noticeOriginRefused: string;
  errorGeneric: string;
  errorNotSent: string;
  errorRateLimited: string;
  errorUnavailable: string;
  errorUnknownConfirmation: string;
  errorTooLong: string;
}

const en: Strings = {
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
  noticeOriginRefused: 'Chat is not available on this website.',
  errorGeneric: 'Something went wrong. Please try again.',
  errorNotSent: 'You are offline, so your answer was not sent. Try again once you are connected.',
  errorRateLimited: 'You are sending messages very quickly. Please wait a moment and try again.',
  errorUnavailable: 'We could not save that just now. Please send it again.',
  errorUnknownConfirmation: 'That request was already answered or has expired.',
  errorTooLong: 'That message is too long. Please shorten it.',
};

const es: Strings = {
  title: 'Soporte',
  subtitle: 'Suele responder en minutos',
  openChat: 'Abrir chat',
  openChatUnread1: 'Abrir chat, 1 mensaje nuevo',
  openChatUnreadN: 'Abrir chat, {n} mensajes nuevos',
  closeChat: 'Cerrar chat',
  dialogLabel: 'Chat con soporte',
  statusConnecting: 'Conectando',
  statusConnected: 'En línea',
  statusReconnecting: 'Reconectando',
  statusDisconnected: 'Desconectado',
  messagesLabel: 'Mensajes',
  welcome: '¡Hola! ¿En qué podemos ayudarte hoy?',
  inputLabel: 'Escribe tu mensaje',
  placeholder: 'Escribe tu mensaje…',
  placeholderDisabled: 'El chat no está disponible',
  send: 'Enviar',
  you: 'Tú',
  support: 'Soporte',
  update: 'Novedad',
  typing: 'Soporte está escribiendo…',
  agentTyping: '{name} está escribiendo…',
  sending: 'Enviando…',
  notSent: 'No enviado',
  retry: 'Reintentar',
  tooLongCount: '{n} / {max} caracteres: demasiado largo para enviarlo',
  justNow: 'ahora mismo',
  newMessages1: '1 mensaje nuevo de Soporte',
  newMessagesN: '{n} mensajes nuevos de Soporte',
  confirmTitle: 'Confirma, por favor',
  confirmQuestion: '¿{summary}?',
  confirmAnnounce: 'Confirma, por favor: ¿{summary}? Los botones Aprobar y Rechazar siguen a los mensajes.',
  approve: 'Aprobar',
  decline: 'Rechazar',
  receiptApproved: 'Aprobaste: {summary}',
  receiptDeclined: 'Rechazaste: {summary}',
  receiptExpired: 'Sin confirmar a tiempo: {summary}',
  receiptCancelled: 'Cancelado: una persona se hace cargo ({summary})',
  noticeReconnecting: 'Se perdió la conexión. Reconectando… Lo que envíes ahora saldrá al volver.',
  noticeSessionEnded: 'Tu sesión ha terminado. Recarga la página para seguir conversando.',
  noticeRefreshing: 'Volviendo a iniciar tu sesión…',
  statusHuman: 'Una persona de nuestro equipo te atenderá aquí en breve.',
  statusHumanAway: 'Tu conversación está ahora con nuestro equipo.',
  statusAgentJoined: '{name} se unió a la conversación',
  statusAssistant: 'Vuelves a hablar con el asistente.',
  handoffClosed: 'Nuestro equipo no está disponible ahora; vuelve el {when}.',
  handoffClosedUnknown: 'Nuestro equipo no está disponible ahora.',
  handoffWait: 'Una persona suele responder en {n} min.',
  handoffOffline: 'Ahora mismo no hay nadie del equipo disponible. Te responderemos aquí en cuanto alguien pueda.',
  emailAsk: 'Déjanos tu correo electrónico y te responderemos también allí, así no tienes que esperar aquí.',
  emailLabel: 'Tu correo electrónico',
  emailSend: 'Enviar',
  emailSaved: '¡Gracias! Te responderemos a {email} o aquí.',
  errorInvalidEmail: 'Escribe un correo electrónico válido.',
  agentFallback: 'Agente de soporte',
  noticeOriginRefused: 'El chat no está disponible en este sitio web.',
  errorGeneric: 'Algo salió mal. Inténtalo de nuevo.',
  errorNotSent: 'Estás sin conexión y tu respuesta no se envió. Inténtalo cuando vuelvas a estar conectado.',
  errorRateLimited: 'Estás enviando mensajes muy rápido. Espera un momento y vuelve a intentarlo.',
  errorUnavailable: 'No pudimos guardarlo en este momento. Envíalo de nuevo, por favor.',
  errorUnknownConfirmation: 'Esa solicitud ya fue respondida o ha caducado.',
  errorTooLong: 'Ese mensaje es demasiado largo. Acórtalo, por favor.',
};

export const LOCALES: Record<string, Strings> = { en, es };

/** The shipped language closest to `wanted` ("es-MX" → es), English when none fits. */
export function pickLocale(wanted: string | undefined): string {
  const tag = (wanted ?? '').toLowerCase();
  if (LOCALES[tag]) return tag;
  const base = tag.split('-')[0];
  return LOCALES[base] ? base : 'en';
}

export function createStrings(locale: string, overrides: Partial<Strings> = {}): Strings {
  const table = Object.assign({}, LOCALES[locale] ?? en);
  for (const [k, v] of Object.entries(overrides)) if (typeof v === 'string' && k in table) table[k as keyof Strings] = v;
  return table;
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
    case 'unauthorized':
      return s.noticeSessionEnded;
    case 'forbidden_origin':
      return s.noticeOriginRefused;
    default:
      return s.errorGeneric;
  }
}
