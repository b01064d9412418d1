// What an LLM call or a WhatsApp message cost, from the configuration's price tables (README, "What it cost").
// LLM prices are per million tokens; a cost is in the configured currency, rounded to a billionth so sums of many
// calls stay exact to the cent.

export interface ModelPrice {
  /** Per million prompt tokens the provider did not read from its cache. */
  prompt: number;
  /** Per million prompt tokens read from the provider's prompt cache (default: `prompt`). */
  cached_prompt?: number;
  /** Per million completion tokens. */
  completion: number;
}

export type PriceTable = Record<string, ModelPrice>;

/** Rounded to 1e-9 of the currency: float error from many small additions stays far below a cent. */
export const roundCost = (v: number) => Math.round(v * 1e9) / 1e9;

/**
 * The price of `model`: its own entry, else the longest entry it starts with followed by `-` (providers answer with a
 * dated snapshot, `gpt-4o-2024-08-06`, of the model asked for, `gpt-4o`); undefined when the table has none.
 */
export function priceOf(prices: PriceTable, model: string): ModelPrice | undefined {
  if (Object.hasOwn(prices, model)) return prices[model];
  let best: string | undefined;
  for (const name of Object.keys(prices)) if (model.startsWith(`${name}-`) && (!best || name.length > best.length)) best = name;
  return best === undefined ? undefined : prices[best];
}

/** The cost of one call's tokens, or undefined when its model has no price. */
export function llmCost(
  prices: PriceTable,
  c: { model: string; promptTokens: number; completionTokens: number; cachedPromptTokens?: number },
): number | undefined {
  const p = priceOf(prices, c.model);
  if (!p) return undefined;
  const cached = Math.min(Math.max(0, c.cachedPromptTokens ?? 0), c.promptTokens);
  const fresh = c.promptTokens - cached;
  return roundCost((fresh * p.prompt + cached * (p.cached_prompt ?? p.prompt) + c.completionTokens * p.completion) / 1e6);
}
