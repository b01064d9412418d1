// Limits of the widget protocol, without zod: the widget bundle imports these values (widget-protocol.ts only as types),
// and the server's routes read them too.

/** The longest customer message, in UTF-16 code units (what `String.length` counts). */
export const WIDGET_MAX_MESSAGE_CHARS = 4000;

/**
 * The languages the bundled widget speaks: English in the bundle, each other one a file the server serves
 * (`/widget-locale-<lang>.json`, built from widget/src/locale-tables.ts: a test holds the two together).
 */
export const WIDGET_LOCALES: readonly string[] = ['en', 'es', 'de', 'fr', 'ar', 'he'];
