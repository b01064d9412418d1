// Which way the widget runs (widget/src/direction.ts): right to left for a language written so, by `Intl.Locale`'s
// text info where the runtime has it (Node 20 has the `textInfo` getter, newer Chromium `getTextInfo()`) and by the
// fallback list where it does not (Firefox); the page's `dir` wins; `auto` and nothing follow the words' language.
import { describe, expect, it } from 'vitest';
import { listedDirection, resolveDirection, scriptDirection } from '../../widget/src/direction.ts';
import { pickLocale } from '../../widget/src/locales.ts';
import { resolveTheme } from '../../widget/src/theme.ts';

const RTL = ['ar', 'ar-EG', 'he', 'he-IL', 'iw', 'fa', 'fa-IR', 'ur', 'ur-PK', 'ps', 'sd', 'ug', 'yi', 'ckb', 'az-Arab', 'pa-Arab'];
const LTR = ['en', 'en-US', 'es', 'de', 'fr', 'ru', 'zh-Hans', 'ja', 'hi', 'tr', 'az', 'pa', 'ku'];

describe('widget direction', () => {
  it('right to left for Arabic, Hebrew, Persian, Urdu (and the other RTL scripts); left to right otherwise', () => {
    for (const tag of RTL) expect(scriptDirection(tag), tag).toBe('rtl');
    for (const tag of LTR) expect(scriptDirection(tag), tag).toBe('ltr');
  });

  it('the fallback list agrees with Intl.Locale wherever this runtime has text info', () => {
    for (const tag of [...RTL, ...LTR]) expect(listedDirection(tag), tag).toBe(scriptDirection(tag));
    // Dhivehi (Thaana script) is right to left; Node 20's ICU data says ltr for it, so the list alone is held to it.
    expect(listedDirection('dv')).toBe('rtl');
    // Not a language tag at all: the list answers, never a throw.
    expect(scriptDirection('not a tag!')).toBe('ltr');
  });

  it("the page's dir wins; auto or nothing follows the language of the widget's words, not the one asked for", () => {
    expect(resolveDirection(undefined, pickLocale('ar-SA'))).toBe('rtl');
    expect(resolveDirection('auto', pickLocale('ar'))).toBe('rtl');
    // Hebrew is shipped: Hebrew words, right to left.
    expect(resolveDirection(undefined, pickLocale('he-IL'))).toBe('rtl');
    // Persian asked for, English words shown: English layout, unless the page says otherwise.
    expect(resolveDirection(undefined, pickLocale('fa'))).toBe('ltr');
    expect(resolveDirection('rtl', pickLocale('fa'))).toBe('rtl');
    expect(resolveDirection('ltr', 'ar')).toBe('ltr');
    expect(resolveDirection('sideways', 'ar')).toBe('rtl');
  });

  it('the launcher and panel default to the end of a line: right, or left right to left; a page position wins', () => {
    expect(resolveTheme({}).position).toBe('right');
    expect(resolveTheme({}, undefined, 'rtl').position).toBe('left');
    expect(resolveTheme({ position: 'right' }, undefined, 'rtl').position).toBe('right');
    expect(resolveTheme({ position: 'left' }, undefined, 'ltr').position).toBe('left');
  });
});
