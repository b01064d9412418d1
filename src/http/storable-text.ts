// Text Parley must keep although it holds NUL (U+0000), from parties it cannot refuse at its door: the model (its
// replies, deltas, tool calls, JSON answers), an MCP server's results, knowledge documents, the Graph API's answers.
// PostgreSQL's text and jsonb cannot hold U+0000 (a jsonb write holding one fails; the engine's text columns showed
// U+FFFD while its json columns and LMDB kept the NUL), so every such value has U+0000 replaced by U+FFFD (the
// replacement character) where it comes in, and both engines store the same. Parties that can be told are refused
// instead: customers and HTTP clients (json-body.ts, url-text.ts, the widget's gateway), SDK backends (sdk/gateway.ts:
// a frame holding NUL gets bad_frame). RELIABILITY.md lists the promise and its test.

export const NUL = '\u0000';
export const REPLACEMENT = '\uFFFD';

/** Why text holding NUL is refused from a party that can be told (an HTTP body, an SDK frame). */
export const NUL_REFUSED = 'text holds a NUL character (\\u0000), which cannot be stored; leave it out';

/** `text` with every U+0000 replaced by U+FFFD; the same string when it holds none. */
export const storableText = (text: string): string => (text.includes(NUL) ? text.replaceAll(NUL, REPLACEMENT) : text);

/**
 * A `\u0000` escape in JSON text, not an escaped backslash followed by "u0000": preceded by an even number of
 * backslashes (JSON text cannot hold a raw U+0000: JSON.parse refuses control characters in strings).
 */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** Whether JSON text spells a NUL anywhere (in a string or a key). */
export const jsonHoldsNul = (json: string): boolean => json.includes('\\u0000') && new RegExp(NUL_ESCAPE.source).test(json);

/** JSON text with every NUL it spells as `\u0000` spelled `\ufffd` instead. */
export const storableJsonText = (json: string): string => (json.includes('\\u0000') ? json.replace(NUL_ESCAPE, '$1\\ufffd') : json);

/**
 * A JSON value (strings, keys, at any depth) with every U+0000 replaced by U+FFFD; the same value when it holds
 * none. Through its JSON text (no recursion of its own): a value that JSON.stringify can write is never too deep here.
 */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  const json = JSON.stringify(value);
  return json.includes('\\u0000') ? (JSON.parse(storableJsonText(json)) as T) : value;
}
