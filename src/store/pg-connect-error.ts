// One clear line for a PostgreSQL connection that failed (node-postgres's errors: a socket error,
// a server's FATAL, or one of its own messages), naming where it tried and why, with the password
// masked: what `storage.url` start-up failures print before exiting.
import { parse } from 'pg-connection-string';

const MASK = '****';

interface Target {
  shown: string;
  host: string;
  port: string;
  password: string;
  user: string;
  database: string;
}

/** What pg tried, read the way pg reads it (pg-connection-string), shown as a URL without the password or query. */
function targetOf(url: string): Target | undefined {
  try {
    const c = parse(url);
    const host = c.host || 'localhost';
    const port = c.port || '5432';
    const user = c.user ?? '';
    const database = c.database || user;
    const password = c.password ?? '';
    const auth = user ? `${encodeURIComponent(user)}${password ? `:${MASK}` : ''}@` : password ? `:${MASK}@` : '';
    const where = host.startsWith('/') ? `${host} (unix socket), port ${port}` : `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const shown = host.startsWith('/') ? `postgres://${auth}/${database} at ${where}` : `postgres://${auth}${where}/${database}`;
    return { shown, host, port, password, user, database };
  } catch {
    return undefined;
  }
}

interface PgError {
  message: string;
  code?: string;
}

function asError(err: unknown): PgError {
  if (err && typeof err === 'object' && typeof (err as PgError).message === 'string') return err as PgError;
  return { message: String(err) };
}

const quoted = (name: string) => (/^[a-z_<][a-z0-9_$>]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

function cause(e: PgError, t: Target | undefined): string {
  const at = t ? (t.host.startsWith('/') ? `the unix socket for port ${t.port} in ${t.host}` : `${t.host}:${t.port}`) : 'that address';
  // A dual-stack host (localhost → ::1 and 127.0.0.1) fails with an AggregateError that carries the code too.
  switch (e.code) {
    case 'ECONNREFUSED':
      return `connection refused: nothing is listening on ${at} (is PostgreSQL running, on that port?)`;
    case 'ENOENT':
      return `nothing at ${at} (is PostgreSQL running, on that port?)`;
    case 'ENOTFOUND':
      return `host ${JSON.stringify(t?.host ?? '')} not found (DNS): check the host in the URL`;
    case 'EAI_AGAIN':
      return `host ${JSON.stringify(t?.host ?? '')} could not be resolved (DNS lookup failed, try again later)`;
    case 'ETIMEDOUT':
      return `no answer from ${at} within the connection timeout (a firewall, a wrong host, or a server that hangs)`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${at} is unreachable from this machine (network)`;
    case 'ECONNRESET':
      return `${at} closed the connection during the handshake (is it PostgreSQL? is it shutting down?)`;
    case 'EACCES':
    case 'EPERM':
      return `not allowed to connect to ${at} (${e.message})`;
    case '28P01':
      return `${e.message} (a wrong password, or no such user)`;
    case '3D000':
      return `${e.message} (create it first, or fix the database name in the URL)`;
    case '42501': // CONNECT revoked: "permission denied for database …"
      return `${e.message}: as a superuser or the database owner, run: GRANT CONNECT ON DATABASE ${quoted(t?.database ?? '<database>')} TO ${quoted(t?.user || '<role>')};`;
    case '28000':
      return `the server refused the connection: ${e.message}`;
    case '53300':
      return `the server has no free connection slot (max_connections): ${e.message}`;
    case '57P03':
      return `the server is not accepting connections now: ${e.message}`;
  }
  if (/timeout/i.test(e.message)) return `no answer from ${at} within the connection timeout (a firewall, a wrong host, or a server that hangs)`;
  if (/client password must be a string/.test(e.message)) return `the server asks for a password and the URL has none`;
  if (/does not support SSL/.test(e.message)) return `the URL asks for SSL (sslmode) and the server does not support it`;
  if (/Connection terminated unexpectedly/.test(e.message)) return `${at} closed the connection during the handshake (is it PostgreSQL? is it shutting down?)`;
  return e.code ? `${e.message} (${e.code})` : e.message;
}

/** The password, raw or percent-encoded, never appears: the server's messages do not echo it, but pg's own might echo the URL. */
function scrub(text: string, url: string, password: string): string {
  let out = url ? text.split(url).join('(the URL)') : text;
  for (const secret of new Set([password, encodeURIComponent(password)])) if (secret) out = out.split(secret).join(MASK);
  return out;
}

/**
 * `cannot connect to PostgreSQL at postgres://parley:****@db:5432/parley: connection refused: …`:
 * one line, never the password.
 */
export function describePgConnectError(err: unknown, url: string): string {
  const t = targetOf(url);
  const why = scrub(cause(asError(err), t), url, t?.password ?? '');
  return `cannot connect to PostgreSQL at ${t?.shown ?? 'the configured URL (not a valid postgres:// URL)'}: ${why}`.replace(/\s+/g, ' ').trim();
}
