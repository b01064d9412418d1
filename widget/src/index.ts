// Parley's embeddable widget. One script tag:
//   <script src="https://parley.example.com/widget.js" data-server-url="…"
//           data-customer-id="…" data-auth-token="…" data-accent="#0a7" data-locale="es" data-dir="auto"></script>
// (or data-auth-url="/parley-token" instead of data-auth-token: sessions that renew themselves, see auth-url.ts;
// data-auth-token alone with an identity token; data-visitors="true" alone for a visitor)
// or window.Parley.init({ serverUrl, customerId, authToken, authUrl, theme, locale, dir, strings, onAuthExpired }).
import { WIDGET_MAX_MESSAGE_CHARS } from '../../sdk/src/widget-limits.ts';
import type { WidgetClientFrame, WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';
import { createRenewal } from './auth-url.ts';
import { resolveDirection, type DirOption } from './direction.ts';
import { createController } from './controller.ts';
import { initialState } from './state.ts';
import { deferredHandle, type WidgetHandle } from './deferred-handle.ts';
import { loadLocale, localeUrl, pickLocale } from './locales.ts';
import { createStrings, type Strings } from './strings.ts';
import { resolveTheme, type Theme } from './theme.ts';
import { createView } from './view.ts';
import { visitorMemory } from './visitor.ts';

export type { WidgetHandle } from './deferred-handle.ts';

export type { Strings, Theme };

export interface InitOptions {
  serverUrl: string;
  /**
   * Needed with a session token unless the auth URL's JSON answer names it (`{token, customerId}`); optional with an
   * identity token (a JWT) and for visitors.
   */
  customerId?: string;
  /** A session token (magic link) or an identity token (a JWT your backend signs); none: a visitor (`identity.visitors`). */
  authToken?: string;
  /**
   * A URL of your own site that answers a fresh session token for the signed-in customer (as text, or JSON
   * `{token}`), fetched with the page's cookies when the widget starts without a token and whenever Parley refuses
   * the one it has (expired); the widget then reconnects without a reload.
   */
  authUrl?: string;
  /** Anonymous development mode only (identity.allow_anonymous). */
  email?: string;
  container?: HTMLElement;
  open?: boolean;
  theme?: Theme;
  /**
   * The customer's locale (`es`, `es-MX`, `de`, `fr`, …): sent to Parley (the model answers in it, confirmations are
   * worded in it) and used for the widget's own words (en, es, de, fr, ar, he; each but English fetched from the
   * server before the widget shows, English after a failure or 3 s). Default: the browser's language for Parley;
   * the page's `<html lang>`, then the browser's language, for the widget's words.
   */
  locale?: string;
  /**
   * Which way the widget is laid out: `auto` (the default) follows the language of its words (right to left for
   * Arabic and Hebrew, mirrored); `rtl` or `ltr` say it, e.g. for `strings` of your own in a language it does not ship.
   */
  dir?: DirOption;
  /** Replaces any of the customer-facing strings of the chosen language. */
  strings?: Partial<Strings>;
  /**
   * The server refused the session token (it expired): return a fresh one (or a promise of it) and the widget
   * reconnects without a reload; return nothing to end the session (the customer is told to reload).
   */
  onAuthExpired?: () => string | null | undefined | Promise<string | null | undefined>;
}

/** A language tag Parley accepts (the init frame's `locale`); anything else is not sent. */
const LOCALE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;
const localeTag = (tag: string | undefined) => (tag && tag.length <= 35 && LOCALE_TAG.test(tag) ? tag : undefined);

const newId = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`);

/** localStorage, when the page may use it (a sandboxed frame or blocked storage throws on access). */
function localStorageOrNone(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

function wsUrl(serverUrl: string): string {
  const u = new URL(serverUrl, location.href);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/$/, '')}/widget/ws`;
  u.search = '';
  return u.toString();
}

/**
 * Starts the widget. In English at once; in another shipped language once its table is loaded (or has failed, or the
 * deadline passed: then in English), so no English word shows first. The handle works from the start either way.
 */
export function init(o: InitOptions): WidgetHandle {
  const warn = (line: string) => console.warn(line);
  const wanted = pickLocale(o.locale ?? (document.documentElement.lang || navigator.language));
  if (wanted === 'en') return start(o, 'en', {}, warn);
  let url: string;
  try {
    url = localeUrl(o.serverUrl, wanted);
  } catch {
    return start(o, 'en', {}, warn); // not a URL: the widget's own start says so (it throws, as it always did)
  }
  const later = deferredHandle();
  void loadLocale(url, wanted, { warn }).then((t) => later.attach(() => start(o, t ? wanted : 'en', t ?? {}, warn)));
  return later.handle;
}

/** The widget in `locale`, its words `table` over English (the words' language, so also its direction). */
function start(o: InitOptions, locale: string, table: Record<string, unknown>, warn: (line: string) => void): WidgetHandle {
  const dir = resolveDirection(o.dir, locale);
  let authToken = o.authToken;
  let customerId = o.customerId ?? '';
  const view = createView(
    o.container,
    {
      onSend: (text) => controller.send(text),
      onAnswer: (id, approve) => controller.answer(id, approve),
      onPanel: (open) => controller.panel(open),
      onRetry: (id) => controller.retry(id),
      onContact: (email) => controller.contact(email),
      onResolve: (yes) => controller.resolve(yes),
      onPerson: () => controller.askPerson(),
      onRate: (score, comment) => controller.rate(score, comment),
    },
    { strings: createStrings(table, o.strings), locale, dir, theme: resolveTheme(o.theme, warn, dir), maxChars: WIDGET_MAX_MESSAGE_CHARS },
  );
  const visitor = visitorMemory(o.serverUrl);
  // The customer's locale for Parley: the page's choice, else the browser's language.
  const customerLocale = localeTag(o.locale) ?? localeTag(navigator.language);
  const initFrame = (): WidgetClientFrame => {
    const frame: WidgetClientFrame = authToken ? { type: 'init', customerId, authToken } : { type: 'init', customerId, email: o.email };
    if (customerLocale) frame.locale = customerLocale;
    return visitor.init(frame);
  };
  const renewal = createRenewal({
    authUrl: o.authUrl,
    onAuthExpired: o.onAuthExpired,
    setAuth: (auth) => {
      authToken = auth.token;
      if (auth.customerId) customerId = auth.customerId;
    },
    log: warn,
  });
  view.render(initialState);
  const controller = createController({
    url: wsUrl(o.serverUrl),
    init: initFrame,
    render: view.render,
    newId,
    refreshAuth: renewal.refreshAuth,
    firstAuth: authToken ? undefined : renewal.firstAuth,
    log: warn,
    onServerFrame: (frame: WidgetServerFrame) => visitor.onFrame(frame, !!authToken),
    storage: localStorageOrNone(),
  });
  // Back online, or the tab visible again: a socket waiting out its backoff connects at once.
  const wake = () => controller.wake();
  const onVisible = () => document.visibilityState === 'visible' && wake();
  window.addEventListener('online', wake);
  document.addEventListener('visibilitychange', onVisible);
  if (o.open) view.open();
  return {
    open: view.open,
    close: view.close,
    destroy() {
      window.removeEventListener('online', wake);
      document.removeEventListener('visibilitychange', onVisible);
      controller.close();
      view.destroy();
    },
    send: controller.send,
    setAuthToken(token: string) {
      authToken = token;
      controller.reconnectIfEnded();
    },
  };
}

/** The script tag's `data-*` attributes as init options (theme and locale included). */
export function optionsFromDataset(d: DOMStringMap, scriptSrc: string): InitOptions {
  const theme: Theme = {};
  if (d.accent) theme.accent = d.accent;
  if (d.title) theme.title = d.title;
  if (d.subtitle !== undefined) theme.subtitle = d.subtitle;
  if (d.position === 'left' || d.position === 'right') theme.position = d.position;
  if (d.colorScheme === 'light' || d.colorScheme === 'dark' || d.colorScheme === 'auto') theme.colorScheme = d.colorScheme;
  return {
    serverUrl: d.serverUrl || new URL(scriptSrc, location.href).origin,
    customerId: d.customerId,
    authToken: d.authToken,
    authUrl: d.authUrl,
    email: d.email,
    locale: d.locale,
    dir: d.dir === 'ltr' || d.dir === 'rtl' || d.dir === 'auto' ? d.dir : undefined,
    open: d.open === 'true',
    theme,
  };
}

declare global {
  interface Window {
    Parley?: { init: typeof init; instance?: WidgetHandle };
  }
}

const script = document.currentScript as HTMLScriptElement | null;
window.Parley = { init };
// A customer (customer id, token or auth URL), or a visitor (`data-visitors="true"`, with identity.visitors on the server).
const d = script?.dataset;
if (script && d && (d.customerId || d.authToken || d.authUrl || d.visitors === 'true')) window.Parley.instance = init(optionsFromDataset(d, script.src));
