// The customer's locale: what their widget said (stored with the customer), else the WhatsApp default for WhatsApp
// conversations. And the few words Parley itself says in it (WhatsApp's Yes/No buttons, the receipt of an action the
// backend did not word). Pure.

/** "es-MX" → "es"; "" or undefined → undefined. */
export const languageOf = (locale: string | undefined): string | undefined => locale?.split('-')[0]?.toLowerCase() || undefined;

/**
 * The locale a conversation is held in: the customer's own (the widget's `init.locale`) or, on WhatsApp where the
 * customer never said, `channels.whatsapp.locale`. Undefined on the web when the widget did not say.
 */
export function conversationLocale(customer: { locale?: string } | undefined, channel: 'web' | 'whatsapp', whatsappDefault: string): string | undefined {
  return customer?.locale ?? (channel === 'whatsapp' ? whatsappDefault : undefined);
}

/** The entry of `byLocale` that fits `locale` best: the exact tag, then its language, then English; else undefined. */
export function pickForLocale<T>(byLocale: Record<string, T> | undefined, locale: string | undefined): T | undefined {
  if (!byLocale) return undefined;
  const keys = Object.keys(byLocale);
  const find = (tag: string | undefined) => (tag ? keys.find((k) => k.toLowerCase() === tag.toLowerCase()) : undefined);
  const key = find(locale) ?? find(languageOf(locale)) ?? keys.find((k) => languageOf(k) === languageOf(locale)) ?? find('en');
  return key === undefined ? undefined : byLocale[key];
}

export interface ParleyWords {
  yes: string;
  no: string;
  /** `{summary}` is the confirmation summary, its first letter lower-cased. */
  done: string;
  /** `{summary}` as above, `{reason}` the backend's error message. */
  failed: string;
  /** The question of a confirmation: `{summary}` whole. */
  question: string;
}

const WORDS: Record<string, ParleyWords> = {
  en: { yes: 'Yes', no: 'No', done: 'Done: {summary}', failed: 'Could not {summary}: {reason}', question: '{summary}?' },
  es: { yes: 'Sí', no: 'No', done: 'Hecho: {summary}', failed: 'No se pudo {summary}: {reason}', question: '¿{summary}?' },
  de: { yes: 'Ja', no: 'Nein', done: 'Erledigt: {summary}', failed: 'Fehlgeschlagen: {summary} ({reason})', question: '{summary}?' },
  fr: { yes: 'Oui', no: 'Non', done: 'Fait : {summary}', failed: 'Impossible de {summary} : {reason}', question: '{summary} ?' },
};

export const wordsFor = (locale: string | undefined): ParleyWords => WORDS[languageOf(locale) ?? 'en'] ?? WORDS.en;

const fill = (template: string, vars: Record<string, string>) => template.replace(/\{(\w+)\}/g, (whole, k: string) => vars[k] ?? whole);
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const MAX_RECEIPT = 500;

/**
 * The receipt of a confirmed action whose backend gave none, derived plainly from the summary and the outcome:
 * "Could not cancel order 1002: it has already shipped" / "Done: Cancel order 1001". German keeps the summary's case.
 */
export function derivedReceipt(locale: string | undefined, summary: string, outcome: { ok: true } | { ok: false; reason: string }): string {
  const words = wordsFor(locale);
  const lowered = languageOf(locale) === 'de' ? summary : lowerFirst(summary);
  const text = outcome.ok ? fill(words.done, { summary }) : fill(words.failed, { summary: lowered, reason: outcome.reason.replace(/[.\s]+$/, '') });
  return text.length > MAX_RECEIPT ? `${text.slice(0, MAX_RECEIPT - 1)}…` : text;
}

/** The confirmation question in the locale's punctuation ("¿Cancelar el pedido 1001?"). */
export const questionFor = (locale: string | undefined, summary: string) => fill(wordsFor(locale).question, { summary });
