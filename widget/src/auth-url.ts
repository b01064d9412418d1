// Sessions that renew themselves: with `authUrl` (`data-auth-url`) the widget asks the integrator's own backend for
// a session token when it starts without one and whenever Parley refuses the one it has (expired), then connects
// again without a reload. The controller calls `firstAuth` / `refreshAuth` (one call per refusal, see
// controller.ts); this file words the fetch, reads the answer and spaces the fetches out.

/** What the auth URL answered: the token, and the customer id when its JSON names one. */
export interface FetchedAuth {
  token: string;
  customerId?: string;
}

/** Session tokens and JWTs are base64 / base64url parts joined by dots: anything else (an HTML login page) is not one. */
const TOKEN = /^[A-Za-z0-9._~+/=-]{1,2048}$/;

/**
 * The auth URL's body: the token as text, or JSON `{token}` (`{sessionToken}` too, as `GET /auth/verify` names it),
 * optionally with `customerId`. Undefined when it holds no token.
 */
export function parseAuthResponse(body: string): FetchedAuth | undefined {
  const text = body.trim();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: the token as text (`{…` that does not parse is neither).
    return !text.startsWith('{') && TOKEN.test(text) ? { token: text } : undefined;
  }
  if (typeof json === 'string') return TOKEN.test(json) ? { token: json } : undefined;
  if (!json || typeof json !== 'object') return undefined; // null, true, 5: a backend saying "nobody signed in"
  const o = json as Record<string, unknown>;
  const token = typeof o.token === 'string' ? o.token : o.sessionToken;
  if (typeof token !== 'string' || !TOKEN.test(token)) return undefined;
  const customerId = o.customerId;
  return typeof customerId === 'string' && customerId ? { token, customerId } : { token };
}

/** Renewals closer together than this (the last fetch was under a minute ago) wait longer each time. */
export const RENEWAL_CALM_MS = 60_000;
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 60_000;
/** A hanging auth URL gives up after this, and the session ends with its notice. */
export const AUTH_FETCH_TIMEOUT_MS = 15_000;

/**
 * How long to wait before the next fetch of the auth URL. The first renewal (or one after a calm minute) goes at
 * once; a token refused again soon after its renewal (a clock off, a backend handing out stale tokens) waits 1 s,
 * 2 s, 4 s … up to 60 s, so no answer of the server or of the auth URL can make the widget fetch in a tight loop.
 */
export function createRenewalPacer(now: () => number) {
  let last = Number.NEGATIVE_INFINITY;
  let streak = 0;
  return {
    next(): number {
      const t = now();
      streak = t - last < RENEWAL_CALM_MS ? streak + 1 : 0;
      const wait = streak === 0 ? 0 : Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (streak - 1));
      last = t + wait;
      return wait;
    },
  };
}

export interface RenewalOptions {
  authUrl?: string;
  onAuthExpired?: () => string | null | undefined | Promise<string | null | undefined>;
  /** Puts the fresh token (and customer id) where the next `init` reads it. */
  setAuth: (auth: FetchedAuth) => void;
  log: (line: string) => void;
  fetchImpl?: typeof fetch;
  now?: () => number;
  setTimer?: Timer;
}

type Timer = (fn: () => void, ms: number) => unknown;

/** The cookies of the integrator's page go with the request: its backend knows who is signed in. */
async function fetchAuth(url: string, o: RenewalOptions, setTimer: Timer): Promise<FetchedAuth | undefined> {
  const abort = new AbortController();
  setTimer(() => abort.abort(), AUTH_FETCH_TIMEOUT_MS);
  try {
    const res = await (o.fetchImpl || fetch)(url, { credentials: 'include', cache: 'no-store', signal: abort.signal });
    const auth = res.ok ? parseAuthResponse(await res.text()) : undefined;
    if (!auth) o.log(`[parley] auth URL: no token (${res.status}; expected the token as text or JSON {"token"})`);
    return auth;
  } catch (err) {
    o.log(`[parley] auth URL: ${err}`);
    return undefined;
  }
}

/**
 * The controller's hooks. `refreshAuth` asks `onAuthExpired` first (the page's own code knows best); when it gives
 * no token (or fails), the auth URL is fetched. `firstAuth` fetches the auth URL before the first connect.
 * Each resolves true once a fresh token is in place.
 */
export function createRenewal(o: RenewalOptions) {
  const setTimer: Timer = o.setTimer || setTimeout;
  const pacer = createRenewalPacer(o.now || Date.now);
  const fromUrl = async (url: string) => {
    const wait = pacer.next();
    if (wait > 0) await new Promise<void>((resolve) => setTimer(resolve, wait));
    const auth = await fetchAuth(url, o, setTimer);
    if (auth) o.setAuth(auth);
    return !!auth;
  };
  const fromHook = async (hook: NonNullable<RenewalOptions['onAuthExpired']>) => {
    try {
      const fresh = await hook();
      if (fresh) o.setAuth({ token: fresh });
      return !!fresh;
    } catch (err) {
      o.log(`[parley] onAuthExpired failed: ${err}`);
      return false;
    }
  };
  const { authUrl, onAuthExpired } = o;
  const refresh = async () => {
    if (onAuthExpired && (await fromHook(onAuthExpired))) return true;
    return authUrl ? fromUrl(authUrl) : false;
  };
  const refreshAuth = onAuthExpired || authUrl ? refresh : undefined;
  return { refreshAuth, firstAuth: authUrl ? () => fromUrl(authUrl) : undefined };
}
