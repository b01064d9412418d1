// What a backend says in the customer's language: a function's confirmation summary (templates per locale, or a
// function of the arguments and the locale) and the receipt of an action once it ran (`withReceipt`, or an error's
// `receipt`). Texts per locale are picked here, by the SDK, from the invoke's `context.locale`.
import type { SummaryTemplates } from './protocol.ts';

/** Texts per locale (`{ en: '…', es: '…' }`), or one text for every locale. */
export type Localized = string | Record<string, string>;

/** A summary computed by the backend: `locale` is the customer's (`es`, `es-MX`); return nothing to let Parley word it. */
export type SummaryFunction<A> = (args: A, locale: string) => string | undefined | null | Promise<string | undefined | null>;

const RECEIPT = Symbol.for('parley.receipt');

interface WithReceipt {
  [RECEIPT]: true;
  data: unknown;
  receipt: Localized;
}

/**
 * A handler's result with the words the customer reads once the action ran: `return withReceipt(order, { en: 'Order
 * 1001 cancelled', es: 'Pedido 1001 cancelado' })`. For a failure, throw an error with a `receipt` property.
 */
export function withReceipt<T>(data: T, receipt: Localized): T {
  return { [RECEIPT]: true, data, receipt } as unknown as T;
}

const isWithReceipt = (v: unknown): v is WithReceipt => !!v && typeof v === 'object' && (v as Partial<WithReceipt>)[RECEIPT] === true;

/** The entry of `texts` for `locale`: the exact tag, its language, English, else the first. */
export function pickLocalized(texts: Localized | undefined, locale: string | undefined): string | undefined {
  if (texts === undefined || typeof texts === 'string') return texts;
  const keys = Object.keys(texts);
  const lang = (t: string | undefined) => t?.split('-')[0].toLowerCase();
  const key =
    keys.find((k) => k.toLowerCase() === locale?.toLowerCase()) ??
    keys.find((k) => k.toLowerCase() === lang(locale)) ??
    keys.find((k) => lang(k) === lang(locale)) ??
    keys.find((k) => k.toLowerCase() === 'en') ??
    keys[0];
  return key === undefined ? undefined : texts[key];
}

const MAX_RECEIPT = 500;
const clip = (s: string | undefined) => (s && s.trim() ? s.trim().slice(0, MAX_RECEIPT) : undefined);

/** A handler's result split into the data and the receipt (in the locale), when it was made by `withReceipt`. */
export function splitResult(out: unknown, locale: string | undefined): { data: unknown; receipt?: string } {
  if (!isWithReceipt(out)) return { data: out };
  const receipt = clip(pickLocalized(out.receipt, locale));
  return receipt ? { data: out.data, receipt } : { data: out.data };
}

/** A thrown error's `receipt` (a string or texts per locale), in the locale. */
export function errorReceipt(err: unknown, locale: string | undefined): string | undefined {
  const r = (err as { receipt?: unknown } | null)?.receipt;
  if (typeof r === 'string') return clip(r);
  if (r && typeof r === 'object') return clip(pickLocalized(r as Record<string, string>, locale));
  return undefined;
}

/** The `summary` option as the registration carries it: templates, or `summarizes` for a function. */
export function summaryDeclaration(summary: SummaryTemplates | SummaryFunction<never> | undefined): { summary?: SummaryTemplates; summarizes: boolean } {
  if (typeof summary === 'function') return { summarizes: true };
  return summary ? { summary, summarizes: false } : { summarizes: false };
}
