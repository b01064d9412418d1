// Issue 21: every customer-facing string from a table (English and Spanish), and times people can read.
// English is in the bundle (strings.ts); the other tables (locale-tables.ts) are built into files fetched on demand.
import { describe, expect, it } from 'vitest';
import { LOCALE_TABLES as LOCALES } from '../../widget/src/locale-tables.ts';
import { pickLocale, SHIPPED_LOCALES } from '../../widget/src/locales.ts';
import { createStrings, errorText, fill } from '../../widget/src/strings.ts';
import { exactTime, relativeTime } from '../../widget/src/time.ts';

describe('widget strings', () => {
  it('Spanish, German, French, Arabic and Hebrew have every key English has, each translated and non-empty', () => {
    const en = LOCALES.en;
    expect(Object.keys(LOCALES).sort()).toEqual(['ar', 'de', 'en', 'es', 'fr', 'he']);
    // The bundle's list of what it may fetch is the tables' list.
    expect([...SHIPPED_LOCALES].sort()).toEqual(Object.keys(LOCALES).sort());
    for (const lang of ['es', 'de', 'fr', 'ar', 'he']) {
      const t = LOCALES[lang];
      expect(Object.keys(t).sort(), lang).toEqual(Object.keys(en).sort());
      for (const k of Object.keys(en) as (keyof typeof en)[]) {
        expect(t[k].trim(), `${lang}.${k}`).not.toBe('');
        // placeholders survive translation
        expect(t[k].match(/\{\w+\}/g) ?? [], `${lang}.${k}`).toEqual(en[k].match(/\{\w+\}/g) ?? []);
      }
    }
    expect(LOCALES.es.send).toBe('Enviar');
    expect(LOCALES.de.send).toBe('Senden');
    expect(LOCALES.fr.send).toBe('Envoyer');
    expect(LOCALES.ar.send).toBe('إرسال');
    expect(LOCALES.he.send).toBe('שליחה');
  });

  it('picks the closest shipped language and lets the page replace single strings', () => {
    expect(pickLocale('es-MX')).toBe('es');
    expect(pickLocale('ES')).toBe('es');
    expect(pickLocale('fr-FR')).toBe('fr');
    expect(pickLocale('de-AT')).toBe('de');
    expect(pickLocale('pt-BR')).toBe('en');
    expect(pickLocale('ar-EG')).toBe('ar');
    expect(pickLocale('he-IL')).toBe('he');
    expect(pickLocale('iw')).toBe('he');
    // Persian, Urdu are not shipped: English words (and so an English, left-to-right layout).
    expect(pickLocale('fa')).toBe('en');
    expect(pickLocale('ur-PK')).toBe('en');
    expect(pickLocale(undefined)).toBe('en');
    const s = createStrings(LOCALES.es, { title: 'Ayuda Acme', nonsense: 'x' } as never);
    expect(s.title).toBe('Ayuda Acme');
    expect(s.send).toBe('Enviar');
    expect('nonsense' in s).toBe(false);
    expect(fill(s.receiptApproved, { summary: 'Cancel order 1001' })).toBe('Aprobaste: Cancel order 1001');
  });

  it('a fetched table gives only strings of known keys; English fills any key it lacks', () => {
    const fetched = JSON.parse('{"send":"Enviar","title":7,"__proto__":{"send":"x"},"toString":"x","extra":"x","welcome":"¡Hola!"}');
    const s = createStrings(fetched, { welcome: 'Hola Acme' });
    expect(s.send).toBe('Enviar');
    expect(s.title).toBe('Support');
    expect(s.welcome).toBe('Hola Acme');
    expect(Object.keys(s).sort()).toEqual(Object.keys(LOCALES.en).sort());
    expect(Object.getPrototypeOf(s)).toBe(Object.prototype);
    expect(createStrings().openChat).toBe('Open chat');
  });

  it('error codes become plain words; unknown codes a generic sentence, never the code', () => {
    const s = createStrings();
    expect(errorText(s, 'rate_limited')).toMatch(/wait a moment/);
    expect(errorText(s, 'unavailable')).toMatch(/send it again/);
    expect(errorText(s, 'bad_frame')).toBe(s.errorGeneric);
    for (const code of ['rate_limited', 'unavailable', 'unknown_confirmation', 'internal', 'unauthorized']) expect(errorText(s, code)).not.toContain(code);
  });
});

describe('message times', () => {
  const now = new Date(2025, 2, 12, 15, 30).getTime();
  it('just now, minutes ago, the clock today, yesterday, then a date', () => {
    expect(relativeTime(now - 20_000, now, 'en', 'just now')).toBe('just now');
    expect(relativeTime(now - 5 * 60_000, now, 'en', 'just now')).toBe('5 min. ago');
    expect(relativeTime(now - 2 * 3600_000, now, 'en', 'just now')).toBe('1:30 PM');
    expect(relativeTime(new Date(2025, 2, 11, 9, 5).getTime(), now, 'en', 'just now')).toBe('Yesterday, 9:05 AM');
    expect(relativeTime(new Date(2025, 0, 3, 9, 5).getTime(), now, 'en', 'just now')).toMatch(/^Jan 3, 9:05 AM$/);
    expect(relativeTime(new Date(2024, 0, 3, 9, 5).getTime(), now, 'en', 'just now')).toMatch(/2024/);
    expect(relativeTime(now - 5 * 60_000, now, 'es', 'ahora mismo')).toBe('hace 5 min');
    expect(relativeTime(new Date(2025, 2, 11, 9, 5).getTime(), now, 'es', 'ahora mismo')).toBe('Ayer, 9:05');
  });
  it('the exact time names the day and the minute', () => {
    expect(exactTime(now, 'en')).toMatch(/Wednesday, March 12, 2025.*3:30/);
  });
});
