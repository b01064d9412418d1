// A PostgreSQL URL as logs and diagnostics may show it: the password, in the authority or as a parameter, masked.
const MASK = '****';

export function maskedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = MASK;
    if (u.searchParams.has('password')) u.searchParams.set('password', MASK);
    return u.toString();
  } catch {
    // Not a WHATWG URL (e.g. `postgres://user:pw@/db?host=/run/postgresql`, an empty host): mask by pattern.
    return url.replace(/^([a-z]+:\/\/[^:@/]*:).*@/i, `$1${MASK}@`).replace(/([?&]password=)[^&]*/i, `$1${MASK}`);
  }
}
