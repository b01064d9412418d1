// What a confirmation card asks the customer, in words built from the function's own description and its
// arguments: "Cancel an order" + {orderId: "1001"} → "Cancel order 1001". Arguments the description does not
// name follow in brackets: "Change the delivery date of order 1001 (date: 2025-03-02)".

const MAX_LENGTH = 160;

/** "orderId" → "order id"; "delivery_date" → "delivery date". */
const words = (key: string) =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .trim();

/** The thing an identifier argument points at: "order id" → "order", "ticket number" → "ticket". */
const noun = (key: string) => words(key).replace(/\s+(id|ids|number|no|code|ref|reference)$/, '');

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The first sentence of a description, without its full stop. */
function firstSentence(description: string): string {
  const line = description.trim().split(/\n/)[0] ?? '';
  const end = line.search(/[.!?](\s|$)/);
  return (end === -1 ? line : line.slice(0, end)).trim();
}

export function humanizeName(name: string): string {
  const w = words(name);
  return w.charAt(0).toUpperCase() + w.slice(1);
}

export function describeAction(name: string, description: string | undefined, args: unknown): string {
  let phrase = firstSentence(description ?? '') || humanizeName(name);
  const rest: string[] = [];
  let named = 0;
  const entries = args && typeof args === 'object' && !Array.isArray(args) ? Object.entries(args as Record<string, unknown>) : [];
  for (const [key, value] of entries) {
    if (value === undefined || value === null || value === '') continue;
    const n = noun(key);
    const simple = typeof value === 'string' || typeof value === 'number';
    const article = n && simple ? new RegExp(`\\b(?:an?|the|one|this|that|your|their)\\s+${escape(n)}\\b`, 'i') : undefined;
    const bare = n && simple ? new RegExp(`\\b${escape(n)}\\b`, 'i') : undefined;
    if (article?.test(phrase)) {
      phrase = phrase.replace(article, (m) => `${m.replace(/^\S+\s+/, '')} ${show(value)}`);
      named++;
    } else if (bare?.test(phrase)) {
      phrase = phrase.replace(bare, (m) => `${m} ${show(value)}`);
      named++;
    } else rest.push(`${words(key)}: ${show(value)}`);
  }
  // "… by its order number" only told the model how to find the order; with the number shown it is noise.
  if (named > 0) phrase = phrase.replace(/\s+(?:by|using|via|with|given)\s+(?:its|their|the|an?|your)\s+[^,;]*$/i, '');
  const text = rest.length ? `${phrase} (${rest.join(', ')})` : phrase;
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH - 1)}…` : text;
}
