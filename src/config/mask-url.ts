// Credentials inside a webhook URL (issue 34, part 3): the user info (`user:password@`) and the values of query
// parameters named like a credential (token, key, secret, sig, signature, password, auth, …) are masked wherever a URL
// is shown: log lines, `/api/v1/webhooks/deliveries` (and so the dashboard), telemetry. The real URL is only used to
// send. `urlCredentials` lists the hidden values, which the log scrubber also replaces wherever else they appear.

export const MASK = '***';

/** A query parameter whose name contains one of these (any case, `_`/`-` ignored around them) carries a credential. */
const SENSITIVE = /token|key|secret|sig|password|passwd|pwd|auth|credential|session|code/i;

const isSensitive = (name: string) => SENSITIVE.test(name);

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** The URL with its credentials replaced by `***` (a value that is not a URL is returned masked whole). */
export function maskUrl(url: string): string {
  const u = parse(url);
  if (!u) return MASK;
  if (u.username) u.username = MASK;
  if (u.password) u.password = MASK;
  // Rebuilt by hand: URLSearchParams would re-encode the other parameters.
  if (u.search) {
    const parts = u.search
      .slice(1)
      .split('&')
      .map((p) => {
        const eq = p.indexOf('=');
        const name = eq < 0 ? p : p.slice(0, eq);
        return eq >= 0 && isSensitive(safeDecode(name)) ? `${name}=${MASK}` : p;
      });
    u.search = `?${parts.join('&')}`;
  }
  return u.href;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The credential values inside a URL (user, password, sensitive query values), raw and decoded. */
export function urlCredentials(url: string): string[] {
  const u = parse(url);
  if (!u) return [url];
  const out = [u.username, u.password];
  for (const p of u.search.slice(1).split('&')) {
    const eq = p.indexOf('=');
    if (eq >= 0 && isSensitive(safeDecode(p.slice(0, eq)))) out.push(p.slice(eq + 1), safeDecode(p.slice(eq + 1)));
  }
  for (const v of [u.username, u.password]) if (v) out.push(safeDecode(v));
  return [...new Set(out.filter(Boolean))];
}
