// Every language's table, for the build (scripts/build-assets.ts writes each but English to
// public/build/widget-locale-<lang>.json) and the tests. Never imported by the widget itself: the bundle carries English
// only and fetches the others (locales.ts).
import type { Strings } from './strings.ts';
import { en } from './strings.ts';
import { ar } from './strings-ar.ts';
import { de } from './strings-de.ts';
import { es } from './strings-es.ts';
import { fr } from './strings-fr.ts';
import { he } from './strings-he.ts';

export const LOCALE_TABLES: Record<string, Strings> = { en, es, de, fr, ar, he };
