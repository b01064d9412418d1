// What every log line goes through just before it is written (pino's `streamWrite` hook, so it
// holds for every child logger, fastify's included, and every destination):
//  1. configured secrets are replaced by value, wherever they appear (an upstream error message
//     quoting the WhatsApp token, a URL carrying a key), on top of the redaction by field name;
//  2. a line longer than MAX_LINE_CHARS has every string cut to MAX_STRING_CHARS and every list
//     and object to MAX_ITEMS, so a client that sends a 900 KB frame cannot grow the log by it.
// Lines under the bound cost one length check and one `includes` per secret.

export const MAX_LINE_CHARS = 8 * 1024;
export const MAX_STRING_CHARS = 1024;
export const MAX_ITEMS = 32;
const MAX_DEPTH = 8;
/** Shorter values are too likely to be ordinary text (or digits inside a number) to replace everywhere. */
export const MIN_SCRUBBED_LENGTH = 8;
export const REDACTED = '[redacted]';

export interface Scrubber {
  /** Adds values to scrub from now on; empty and short ones are ignored. */
  add(values: Iterable<string | undefined>): void;
  /** Every known secret in `text` replaced by `[redacted]`. */
  text(text: string): string;
  /** One serialized log line: secrets scrubbed, then cut if it is too long. */
  line(line: string): string;
}

/** Cuts one string to `max` characters, saying how much was dropped. */
export function clip(value: string, max = MAX_STRING_CHARS): string {
  return value.length > max ? `${value.slice(0, max)}…[${value.length - max} more characters cut]` : value;
}

function cut(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return clip(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[cut: nested too deep]';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => cut(v, depth + 1));
    if (value.length > MAX_ITEMS) items.push(`…[${value.length - MAX_ITEMS} more items cut]`);
    return items;
  }
  const keys = Object.keys(value);
  const out: Record<string, unknown> = {};
  for (const key of keys.slice(0, MAX_ITEMS)) out[clip(key, 64)] = cut((value as Record<string, unknown>)[key], depth + 1);
  if (keys.length > MAX_ITEMS) out['…'] = `${keys.length - MAX_ITEMS} more keys cut`;
  return out;
}

function cutLine(line: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return `${clip(line.trimEnd(), MAX_LINE_CHARS)}\n`; // not JSON (a pretty-printer's own line): cut as text
  }
  const shorter = JSON.stringify(cut(parsed, 0));
  return `${shorter.length > 4 * MAX_LINE_CHARS ? clip(shorter, 4 * MAX_LINE_CHARS) : shorter}\n`;
}

export function createScrubber(values: Iterable<string | undefined> = []): Scrubber {
  // Each secret as it can appear in a line: raw, JSON-escaped (once or twice), percent-encoded.
  const forms = new Set<string>();
  const add = (list: Iterable<string | undefined>) => {
    for (const v of list) {
      if (!v || v.length < MIN_SCRUBBED_LENGTH) continue;
      const escaped = JSON.stringify(v).slice(1, -1);
      for (const f of [v, escaped, JSON.stringify(escaped).slice(1, -1), encodeURIComponent(v)]) forms.add(f);
    }
  };
  add(values);
  const text = (s: string) => {
    let out = s;
    for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
    return out;
  };
  return {
    add,
    text,
    line(line) {
      const scrubbed = text(line);
      return scrubbed.length > MAX_LINE_CHARS ? cutLine(scrubbed) : scrubbed;
    },
  };
}
