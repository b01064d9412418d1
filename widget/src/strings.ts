// Every word the customer sees, per language. `{name}` placeholders are filled by `fill`.
// A host page picks the language with `locale` and may replace any string with `strings`.
import { ar } from './strings-ar.ts';

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
  ratingTitle: string;
  ratingScore: string;
  ratingComment: string;
  ratingSend: string;
  ratingThanks: string;
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
  ratingTitle: 'How would you rate this conversation?',
  ratingScore: '{n} out of 5',
  ratingComment: 'Anything to add? (optional)',
  ratingSend: 'Send rating',
  ratingThanks: 'Thank you for your rating!',
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
  sources: 'Fuentes',
  sourceChip: 'Fuente {n}',
  noticeOriginRefused: 'El chat no está disponible en este sitio web.',
  errorGeneric: 'Algo salió mal. Inténtalo de nuevo.',
  errorNotSent: 'Estás sin conexión y tu respuesta no se envió. Inténtalo cuando vuelvas a estar conectado.',
  errorRateLimited: 'Estás enviando mensajes muy rápido. Espera un momento y vuelve a intentarlo.',
  errorUnavailable: 'No pudimos guardarlo en este momento. Envíalo de nuevo, por favor.',
  errorUnknownConfirmation: 'Esa solicitud ya fue respondida o ha caducado.',
  errorTooLong: 'Ese mensaje es demasiado largo. Acórtalo, por favor.',
  feedbackQuestion: '¿Respondimos a tu pregunta?',
  feedbackYes: 'Sí',
  feedbackNo: 'No',
  feedbackThanks: 'Gracias por contárnoslo.',
  ratingTitle: '¿Cómo valorarías esta conversación?',
  ratingScore: '{n} de 5',
  ratingComment: '¿Algo más que quieras decirnos? (opcional)',
  ratingSend: 'Enviar valoración',
  ratingThanks: '¡Gracias por tu valoración!',
};

const de: Strings = {
  title: 'Support',
  subtitle: 'Antwortet meist in wenigen Minuten',
  openChat: 'Chat öffnen',
  openChatUnread1: 'Chat öffnen, 1 neue Nachricht',
  openChatUnreadN: 'Chat öffnen, {n} neue Nachrichten',
  closeChat: 'Chat schließen',
  dialogLabel: 'Chat mit dem Support',
  statusConnecting: 'Verbinde',
  statusConnected: 'Online',
  statusReconnecting: 'Verbinde neu',
  statusDisconnected: 'Getrennt',
  messagesLabel: 'Nachrichten',
  welcome: 'Hallo! Wie können wir helfen?',
  inputLabel: 'Nachricht eingeben',
  placeholder: 'Nachricht eingeben…',
  placeholderDisabled: 'Der Chat ist nicht verfügbar',
  send: 'Senden',
  you: 'Du',
  support: 'Support',
  update: 'Neuigkeit',
  typing: 'Support schreibt…',
  sending: 'Wird gesendet…',
  notSent: 'Nicht gesendet',
  retry: 'Erneut senden',
  tooLongCount: '{n} / {max} Zeichen: zu lang zum Senden',
  justNow: 'gerade eben',
  newMessages1: '1 neue Nachricht vom Support',
  newMessagesN: '{n} neue Nachrichten vom Support',
  confirmTitle: 'Bitte bestätigen',
  confirmQuestion: '{summary}?',
  confirmAnnounce: 'Bitte bestätigen: {summary}? Die Schaltflächen Bestätigen und Ablehnen folgen den Nachrichten.',
  approve: 'Bestätigen',
  decline: 'Ablehnen',
  receiptApproved: 'Bestätigt: {summary}',
  receiptDeclined: 'Abgelehnt: {summary}',
  receiptExpired: 'Nicht rechtzeitig bestätigt: {summary}',
  receiptCancelled: 'Abgebrochen: eine Person übernimmt ({summary})',
  noticeReconnecting: 'Verbindung verloren. Verbinde neu… Was du jetzt sendest, geht raus, sobald wir zurück sind.',
  noticeSessionEnded: 'Deine Sitzung ist abgelaufen. Lade die Seite neu, um weiterzuschreiben.',
  noticeRefreshing: 'Du wirst erneut angemeldet…',
  statusHuman: 'Eine Person aus unserem Team ist gleich für dich da.',
  statusAgentJoined: '{name} ist dem Gespräch beigetreten',
  statusAssistant: 'Du schreibst wieder mit dem Assistenten.',
  agentFallback: 'Support-Mitarbeiter',
  noticeOriginRefused: 'Der Chat ist auf dieser Website nicht verfügbar.',
  errorGeneric: 'Etwas ist schiefgelaufen. Bitte versuche es erneut.',
  errorNotSent: 'Du bist offline, deine Antwort wurde nicht gesendet. Versuche es erneut, sobald du verbunden bist.',
  errorRateLimited: 'Du sendest sehr schnell Nachrichten. Warte kurz und versuche es dann erneut.',
  errorUnavailable: 'Das konnten wir gerade nicht speichern. Bitte sende es erneut.',
  errorUnknownConfirmation: 'Diese Anfrage wurde schon beantwortet oder ist abgelaufen.',
  errorTooLong: 'Diese Nachricht ist zu lang. Bitte kürze sie.',
  statusHumanAway: 'Ihr Gespräch liegt jetzt bei unserem Team.',
  handoffClosed: 'Unser Team ist gerade nicht da und wieder erreichbar {when}.',
  handoffClosedUnknown: 'Unser Team ist gerade nicht da.',
  handoffWait: 'Eine Person antwortet meist innerhalb von {n} Min.',
  handoffOffline: 'Gerade ist niemand aus unserem Team frei. Wir antworten hier, sobald jemand Zeit hat.',
  emailAsk: 'Hinterlassen Sie Ihre E-Mail-Adresse, dann antworten wir auch dort und Sie müssen hier nicht warten.',
  emailLabel: 'Ihre E-Mail-Adresse',
  emailSend: 'Senden',
  emailSaved: 'Danke! Wir antworten an {email} oder hier.',
  errorInvalidEmail: 'Bitte geben Sie eine gültige E-Mail-Adresse ein.',
  feedbackQuestion: 'Hat das Ihre Frage beantwortet?',
  feedbackYes: 'Ja',
  feedbackNo: 'Nein',
  feedbackThanks: 'Danke für Ihre Rückmeldung.',
  ratingTitle: 'Wie bewerten Sie dieses Gespräch?',
  ratingScore: '{n} von 5',
  ratingComment: 'Möchten Sie noch etwas ergänzen? (optional)',
  ratingSend: 'Bewertung senden',
  ratingThanks: 'Vielen Dank für Ihre Bewertung!',
  sources: 'Quellen',
  sourceChip: 'Quelle {n}',
  agentTyping: '{name} schreibt…',
};

const fr: Strings = {
  title: 'Assistance',
  subtitle: 'Répond généralement en quelques minutes',
  openChat: 'Ouvrir le chat',
  openChatUnread1: 'Ouvrir le chat, 1 nouveau message',
  openChatUnreadN: 'Ouvrir le chat, {n} nouveaux messages',
  closeChat: 'Fermer le chat',
  dialogLabel: "Chat avec l'assistance",
  statusConnecting: 'Connexion',
  statusConnected: 'En ligne',
  statusReconnecting: 'Reconnexion',
  statusDisconnected: 'Déconnecté',
  messagesLabel: 'Messages',
  welcome: 'Bonjour ! Comment pouvons-nous vous aider ?',
  inputLabel: 'Écrivez votre message',
  placeholder: 'Écrivez votre message…',
  placeholderDisabled: "Le chat n'est pas disponible",
  send: 'Envoyer',
  you: 'Vous',
  support: 'Assistance',
  update: 'Nouveauté',
  typing: "L'assistance écrit…",
  sending: 'Envoi…',
  notSent: 'Non envoyé',
  retry: 'Réessayer',
  tooLongCount: '{n} / {max} caractères : trop long pour être envoyé',
  justNow: "à l'instant",
  newMessages1: "1 nouveau message de l'assistance",
  newMessagesN: "{n} nouveaux messages de l'assistance",
  confirmTitle: 'Merci de confirmer',
  confirmQuestion: '{summary} ?',
  confirmAnnounce: 'Merci de confirmer : {summary} ? Les boutons Accepter et Refuser suivent les messages.',
  approve: 'Accepter',
  decline: 'Refuser',
  receiptApproved: 'Vous avez accepté : {summary}',
  receiptDeclined: 'Vous avez refusé : {summary}',
  receiptExpired: 'Non confirmé à temps : {summary}',
  receiptCancelled: 'Annulé : une personne prend le relais ({summary})',
  noticeReconnecting: 'Connexion perdue. Reconnexion… Ce que vous envoyez maintenant partira dès notre retour.',
  noticeSessionEnded: 'Votre session a expiré. Rechargez la page pour continuer.',
  noticeRefreshing: 'Reconnexion à votre compte…',
  statusHuman: 'Une personne de notre équipe va vous rejoindre ici.',
  statusAgentJoined: '{name} a rejoint la conversation',
  statusAssistant: "Vous discutez de nouveau avec l'assistant.",
  agentFallback: "Agent de l'assistance",
  noticeOriginRefused: "Le chat n'est pas disponible sur ce site.",
  errorGeneric: "Une erreur s'est produite. Veuillez réessayer.",
  errorNotSent: "Vous êtes hors ligne : votre réponse n'a pas été envoyée. Réessayez une fois connecté.",
  errorRateLimited: 'Vous envoyez des messages très vite. Patientez un instant puis réessayez.',
  errorUnavailable: "Nous n'avons pas pu l'enregistrer. Veuillez l'envoyer de nouveau.",
  errorUnknownConfirmation: 'Cette demande a déjà reçu une réponse ou a expiré.',
  errorTooLong: 'Ce message est trop long. Veuillez le raccourcir.',
  statusHumanAway: 'Votre conversation est maintenant avec notre équipe.',
  handoffClosed: 'Notre équipe est absente pour le moment et de retour {when}.',
  handoffClosedUnknown: 'Notre équipe est absente pour le moment.',
  handoffWait: 'Une personne répond généralement en {n} min.',
  handoffOffline: "Personne de notre équipe n'est disponible pour le moment. Nous répondrons ici dès que possible.",
  emailAsk: 'Laissez votre adresse e-mail et nous y répondrons aussi, sans que vous ayez à attendre ici.',
  emailLabel: 'Votre adresse e-mail',
  emailSend: 'Envoyer',
  emailSaved: 'Merci ! Nous répondrons à {email} ou ici.',
  errorInvalidEmail: 'Veuillez saisir une adresse e-mail valide.',
  feedbackQuestion: 'Cela a-t-il répondu à votre question ?',
  feedbackYes: 'Oui',
  feedbackNo: 'Non',
  feedbackThanks: 'Merci de nous le dire.',
  ratingTitle: 'Comment évalueriez-vous cette conversation ?',
  ratingScore: '{n} sur 5',
  ratingComment: 'Quelque chose à ajouter ? (facultatif)',
  ratingSend: "Envoyer l'évaluation",
  ratingThanks: 'Merci pour votre évaluation !',
  sources: 'Sources',
  sourceChip: 'Source {n}',
  agentTyping: '{name} écrit…',
};

export const LOCALES: Record<string, Strings> = { en, es, de, fr, ar };

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
