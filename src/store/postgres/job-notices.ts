// The store's one LISTEN connection: a dedicated pg.Client (LISTEN needs a session of its own, never a pooled
// connection) that hears `parley_jobs` notices and hands them to the queues' workers. Opened when the first worker
// watches, so tools and tests that never run jobs do not hold it. When it is lost (the server restarted, the
// connection was cut or terminated) it is opened again with backoff, and every (re)connection is announced as a
// `rescan`: notices sent while nobody listened are gone, so the workers look at their queues again.
import pg from 'pg';
import type { Clock, TimerHandle } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import type { JobNotice } from '../repos.ts';
import { JOBS_CHANNEL } from './jobs.ts';

export interface JobNoticesOptions {
  url: string;
  clock: Clock;
  logger?: Logger;
  connectTimeoutMs: number;
  /** The store's holder name (jobs.ts): this long-lived connection keeps its job leases live. */
  applicationName?: string;
  /** The first wait before reconnecting; it doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

/** `<seq>:<queue>` → the notice (undefined for anything else on the channel). */
export function parseJobNotice(payload: string | undefined): JobNotice | undefined {
  const at = payload?.indexOf(':') ?? -1;
  if (!payload || at <= 0) return undefined;
  const seq = Number(payload.slice(0, at));
  return Number.isSafeInteger(seq) ? { queue: payload.slice(at + 1), seq } : undefined;
}

export function createJobNotices(o: JobNoticesOptions) {
  const retryMs = o.retryMs ?? 100;
  const maxRetryMs = o.maxRetryMs ?? 5000;
  const log = o.logger?.child({ component: 'store', engine: 'postgres', part: 'job-notices' });
  const listeners = new Set<(n: JobNotice) => void>();
  let client: pg.Client | undefined;
  let connecting = false;
  let timer: TimerHandle | undefined;
  let failures = 0;
  let closed = false;

  const emit = (n: JobNotice) => {
    for (const l of [...listeners]) l(n);
  };

  const retry = () => {
    if (closed || timer) return;
    const wait = Math.min(maxRetryMs, retryMs * 2 ** Math.min(failures, 16));
    failures++;
    timer = o.clock.setTimeout(() => {
      timer = undefined;
      void connect();
    }, wait);
  };

  async function connect() {
    if (closed || connecting || client) return;
    connecting = true;
    const c = new pg.Client({
      connectionString: o.url,
      keepAlive: true,
      application_name: o.applicationName ?? 'parley-jobs-listen',
      connectionTimeoutMillis: o.connectTimeoutMs,
    });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (client === c) {
        client = undefined;
        log?.warn({ err: err && { message: err.message, code: (err as { code?: string }).code } }, 'the LISTEN connection was lost; reconnecting');
      }
      c.end().catch(() => undefined);
      retry();
    };
    c.on('error', onLost);
    c.on('end', () => onLost());
    c.on('notification', (m) => {
      const n = m.channel === JOBS_CHANNEL ? parseJobNotice(m.payload) : undefined;
      if (n) emit(n);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${JOBS_CHANNEL}`);
    } catch (err) {
      connecting = false;
      onLost(err as Error);
      return;
    }
    connecting = false;
    if (closed || lost) {
      if (!lost) await c.end().catch(() => undefined);
      return;
    }
    client = c;
    failures = 0;
    // Whatever was stored before LISTEN took effect was never announced to us.
    emit({ rescan: true });
  }

  return {
    watch(listener: (n: JobNotice) => void): () => void {
      listeners.add(listener);
      if (!closed && !client && !timer) void connect();
      return () => void listeners.delete(listener);
    },
    /** True while LISTEN is in effect (diagnostics, tests). */
    listening: () => client !== undefined,
    async close() {
      closed = true;
      o.clock.clearTimeout(timer);
      timer = undefined;
      const c = client;
      client = undefined;
      if (c) await c.end().catch(() => undefined);
    },
  };
}
