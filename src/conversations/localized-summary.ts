// A confirmation's summary in the customer's locale: the backend's own words (a `summarizes` function, asked with a
// deadline), else the function's templates for that locale (`{orderId}` filled from the arguments), else the
// built-in English summary (action-summary.ts).
import type { CatalogEntry } from '../services.ts';
import { pickForLocale } from '../customers/locale.ts';
import { describeAction } from './action-summary.ts';

const MAX_LENGTH = 300;

const show = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

/** "Cancelar el pedido {orderId}" + {orderId: "1001"} → "Cancelar el pedido 1001". Unknown placeholders stay as written. */
export function fillSummary(template: string, args: unknown): string {
  const values = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const text = template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, key: string) => (key in values ? show(values[key]) : whole)).trim();
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH - 1)}…` : text;
}

export interface SummaryDeps {
  /** The backend's own words (SdkHub.summarize); undefined when it has none in time. */
  ask?: (name: string, args: unknown, locale: string) => Promise<string | undefined>;
}

/** Never rejects: the backend's failure to answer falls back to the templates, then the built-in summary. */
export async function localizedSummary(
  entry: Pick<CatalogEntry, 'description' | 'summary' | 'summarizes'> | undefined,
  name: string,
  args: unknown,
  locale: string | undefined,
  deps: SummaryDeps,
): Promise<string> {
  if (entry?.summarizes && deps.ask) {
    const own = await deps.ask(name, args, locale ?? 'en').catch(() => undefined);
    if (own?.trim()) return own.trim().slice(0, MAX_LENGTH);
  }
  const template = pickForLocale(entry?.summary, locale);
  if (template) return fillSummary(template, args);
  return describeAction(name, entry?.description, args);
}
