// The store's first connection. A server that cannot be reached yet (refused, starting up, shutting down, out of
// connection slots: what unavailable.ts calls unavailable) is tried again every 500 ms for a while, so a Parley started
// beside its database waits for it; then, or at once for anything else (a wrong password, a missing database), one
// line (describePgConnectError) and a StoreOpenError. Bounded: the last attempt starts before `retryMs` has passed and
// lasts at most the pool's connection timeout.
//
// Real monotonic time, not the injected Clock: this bounds how long a process waits at start-up (a test clock's
// offset must not change it), and the wait between attempts must keep the process alive (the Clock's timers do not).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { StoreOpenError } from '../errors.ts';
import { describePgConnectError } from '../pg-connect-error.ts';
import { unavailability } from './unavailable.ts';

export const START_RETRY_MS = 10_000;
const RETRY_EVERY_MS = 500;

export async function connectAtStart(pool: pg.Pool, o: { url: string; retryMs?: number; onRetry?: (err: unknown) => void }): Promise<pg.PoolClient> {
  const retryMs = o.retryMs ?? START_RETRY_MS;
  const until = performance.now() + retryMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await pool.connect();
    } catch (err) {
      const transient = unavailability(err) !== undefined;
      if (!transient || performance.now() + RETRY_EVERY_MS > until) {
        const tried = transient && retryMs > 0 ? `; tried for ${Number((retryMs / 1000).toFixed(1))} s` : '';
        throw new StoreOpenError(`${describePgConnectError(err, o.url)}${tried}`);
      }
      if (attempt === 1) o.onRetry?.(err);
      await sleep(RETRY_EVERY_MS);
    }
  }
}
