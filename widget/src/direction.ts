// Which way the widget's words run. The layout follows the language the widget's own words are in (the shipped
// table `pickLocale` chose), never a language the page asked for but the widget does not speak: an English panel laid
// out right to left would be wrong for everyone. A page that writes its own `strings` in such a language says so
// with `dir: 'rtl'`. The shipped right-to-left languages are `ar` and `he`; when their table could not be loaded
// (locales.ts) the words are English, and so is the layout.

export type Direction = 'ltr' | 'rtl';
export type DirOption = Direction | 'auto';

/** Languages written right to left (primary subtags), for browsers without `Intl.Locale`'s text info (Firefox). */
const RTL_LANGUAGES = ['ar', 'arc', 'ckb', 'dv', 'fa', 'he', 'iw', 'ks', 'ps', 'sd', 'syr', 'ug', 'ur', 'yi'];
/** Or a right-to-left script named in the tag (`az-Arab`, `pa-Arab`). */
const RTL_SCRIPT = /-(arab|hebr|syrc|thaa|nkoo|adlm|rohg)(-|$)/i;

interface TextInfoLocale {
  getTextInfo?: () => { direction?: string };
  textInfo?: { direction?: string };
}

/** The writing direction of a language tag: a right-to-left script subtag, else `Intl.Locale`'s text info where the browser has it, else the list. */
export function scriptDirection(tag: string): Direction {
  // A script the tag names decides first (ICU's data misses some, e.g. az-Arab).
  if (RTL_SCRIPT.test(tag)) return 'rtl';
  try {
    const l = new Intl.Locale(tag) as Intl.Locale & TextInfoLocale;
    const info = l.getTextInfo ? l.getTextInfo() : l.textInfo;
    if (info?.direction === 'rtl' || info?.direction === 'ltr') return info.direction;
  } catch {
    // not a valid tag: the list decides
  }
  return listedDirection(tag);
}

/** The fallback: a listed language, or a right-to-left script subtag. */
export const listedDirection = (tag: string): Direction => (RTL_LANGUAGES.includes(tag.toLowerCase().split('-')[0]) || RTL_SCRIPT.test(tag) ? 'rtl' : 'ltr');

/** The page's `dir` option when it is `ltr` or `rtl`; otherwise (`auto`, nothing) the direction of the widget's words. */
export function resolveDirection(option: string | undefined, uiLocale: string): Direction {
  return option === 'ltr' || option === 'rtl' ? option : scriptDirection(uiLocale);
}
