// Which failures mean "PostgreSQL cannot serve us now" (try again later) rather than "this statement is wrong":
// the first become a StoreUnavailableError, with a short cause for `/ready` (`unreachable: ECONNREFUSED`).
import { StoreUnavailableError } from '../errors.ts';

export interface Unavailability {
  /** The StoreUnavailableError's code: `unreachable`, `timeout`, `shutdown`, `overloaded`, `disk_full`, `read_only`, `closed`. */
  code: string;
  /** What exactly, for `checks().database`: e.g. `ECONNREFUSED`, `statement_timeout`, `57P01`. */
  cause: string;
}

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ECONNABORTED']);

/** node-postgres reports these without a code. */
const MESSAGES: [RegExp, Unavailability][] = [
  [/^Connection terminated due to connection timeout/, { code: 'timeout', cause: 'connect_timeout' }],
  [/^Connection terminated/, { code: 'unreachable', cause: 'connection_lost' }],
  [/not queryable/, { code: 'unreachable', cause: 'connection_lost' }],
  [/^timeout exceeded when trying to connect/, { code: 'timeout', cause: 'connect_timeout' }],
  [/^Query read timeout/, { code: 'timeout', cause: 'no_answer' }],
  [/after calling end on the pool/, { code: 'closed', cause: 'closed' }],
];

/** SQLSTATEs of the server: https://www.postgresql.org/docs/current/errcodes-appendix.html */
function bySqlState(state: string): Unavailability | undefined {
  if (state === '57014') return { code: 'timeout', cause: 'statement_timeout' };
  if (state === '55P03') return { code: 'timeout', cause: 'lock_timeout' };
  // Our session sat in a transaction past idle_in_transaction_session_timeout (this process was paused): ended by the server.
  if (state === '25P03') return { code: 'timeout', cause: 'idle_in_transaction_timeout' };
  if (state === '57P01' || state === '57P02') return { code: 'shutdown', cause: state };
  if (state === '57P03') return { code: 'unreachable', cause: 'starting_up' };
  if (state.startsWith('08')) return { code: 'unreachable', cause: state };
  if (state === '53100') return { code: 'disk_full', cause: state };
  if (state === '53300') return { code: 'overloaded', cause: 'too_many_connections' };
  if (state.startsWith('53')) return { code: 'overloaded', cause: state };
  if (state === '25006') return { code: 'read_only', cause: state };
  return undefined;
}

export function unavailability(err: unknown): Unavailability | undefined {
  if (err instanceof StoreUnavailableError) return { code: err.code, cause: err.code };
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code && SOCKET_CODES.has(code)) return { code: 'unreachable', cause: code };
  // Node's happy-eyeballs connect (localhost → ::1 and 127.0.0.1) fails with an AggregateError of socket errors.
  if (Array.isArray(e?.errors) && e.errors.length) return unavailability(e.errors[0]);
  if (code && /^[0-9A-Z]{5}$/.test(code)) return bySqlState(code);
  const message = typeof e?.message === 'string' ? e.message : '';
  for (const [pattern, u] of MESSAGES) if (pattern.test(message)) return u;
  return undefined;
}

/** The error a caller sees: a StoreUnavailableError for the conditions above, the original error otherwise. */
export function asStoreError(err: unknown, u = unavailability(err)): unknown {
  if (!u || err instanceof StoreUnavailableError) return err;
  const detail = (err as Error)?.message ?? String(err);
  return new StoreUnavailableError(u.code, `PostgreSQL is unavailable (${u.code}: ${u.cause}): ${detail}`);
}
