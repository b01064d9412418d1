// Which languages the widget speaks, and fetching one. The bundle carries English only; every other language is its
// own built file (public/build/widget-locale-<lang>.json, from locale-tables.ts), fetched from the Parley server before
// the widget shows any word, so a Spanish page never flashes English. A table that fails to load or takes longer than
// the deadline gives English (one console warning): the widget is never held up for long, nor left without words.
import { WIDGET_LOCALES } from '../../sdk/src/widget-limits.ts';

/** The shipped languages (locale-tables.ts has a table for each: a unit test holds the two together). */
export const SHIPPED_LOCALES = WIDGET_LOCALES;

/** How long the widget waits for a language's table before it shows English instead. */
export const LOCALE_DEADLINE_MS = 3000;

/** The shipped language closest to `wanted` ("es-MX" → es, "iw" → he), English when none fits. */
export function pickLocale(wanted: string | undefined): string {
  const tag = (wanted ?? '').toLowerCase();
  const base = tag.split('-')[0] === 'iw' ? 'he' : tag.split('-')[0];
  return SHIPPED_LOCALES.includes(tag) ? tag : SHIPPED_LOCALES.includes(base) ? base : 'en';
}

// The build's content hash of each table (`?v=`): the files are cached for a year, and a new build asks for new URLs.
declare const __PARLEY_LOCALE_VERSIONS__: Record<string, string> | undefined;
const versions = (): Record<string, string> => (typeof __PARLEY_LOCALE_VERSIONS__ === 'object' ? __PARLEY_LOCALE_VERSIONS__ : {});

/** Where a language's table is: beside widget.js on the Parley server (`serverUrl` may have a path). */
export function localeUrl(serverUrl: string, lang: string, base = location.href): string {
  const u = new URL(serverUrl, base);
  u.pathname = `${u.pathname.replace(/\/$/, '')}/widget-locale-${lang}.json`;
  const v = versions()[lang];
  u.search = v ? `?v=${encodeURIComponent(v)}` : '';
  u.hash = '';
  return u.toString();
}

export interface LoadOptions {
  fetch?: typeof fetch;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
  deadlineMs?: number;
  warn: (line: string) => void;
}

/**
 * The table of `lang` from `url`, or undefined (then English) when it failed, was not a table, or missed the deadline;
 * each of those warns once. What the table holds is filtered by `createStrings` (strings of known keys only).
 */
export function loadLocale(url: string, lang: string, o: LoadOptions): Promise<Record<string, unknown> | undefined> {
  const doFetch = o.fetch ?? ((input: string, init?: RequestInit) => fetch(input, init));
  const setTimer = o.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const clearTimer = o.clearTimer ?? ((h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>));
  const abort = typeof AbortController === 'function' ? new AbortController() : undefined;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (table: Record<string, unknown> | undefined, problem?: string) => {
      if (settled) return;
      settled = true;
      clearTimer(timer);
      if (problem) o.warn(`[parley] the widget's ${lang} strings ${problem}: showing English`);
      resolve(table);
    };
    const timer = setTimer(() => {
      abort?.abort();
      settle(undefined, `did not load within ${o.deadlineMs ?? LOCALE_DEADLINE_MS} ms`);
    }, o.deadlineMs ?? LOCALE_DEADLINE_MS);
    doFetch(url, { mode: 'cors', credentials: 'omit', signal: abort?.signal })
      .then(async (r) => {
        if (!r.ok) return settle(undefined, `could not be loaded (HTTP ${r.status} from ${url})`);
        const table: unknown = await r.json();
        if (!table || typeof table !== 'object' || Array.isArray(table)) return settle(undefined, `are not a table (${url})`);
        settle(table as Record<string, unknown>);
      })
      .catch((err: unknown) => settle(undefined, `could not be loaded (${(err as Error)?.message ?? String(err)}, ${url})`));
  });
}
