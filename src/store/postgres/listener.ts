// The store's one LISTEN connection: a dedicated pg.Client (LISTEN needs a session of its own, never a pooled
// connection) that hears the store's channels (job notices, the cluster bus) and hands each notification to the
// handlers of its channel. Opened when the first handler is added, so tools and tests that never listen do not hold
// it. When it is lost (the server restarted, the connection was cut or terminated) it is opened again with backoff,
// and every (re)connection is announced to the `onListening` handlers: notices sent while nobody listened are gone.
import pg from 'pg';
import type { Clock, TimerHandle } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import type { JobNotice } from '../repos.ts';

export interface ListenerOptions {
  url: string;
  /** The channels LISTENed to (identifiers: letters, digits, underscores). */
  channels: string[];
  clock: Clock;
  logger?: Logger;
  connectTimeoutMs: number;
  /** The store's holder name (jobs.ts): this long-lived connection keeps its job leases and its node live. */
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

export interface Listener {
  /** Handles the channel's notifications; returns the removal. Opens the connection when it is the first handler. */
  on(channel: string, handler: (payload: string) => void): () => void;
  /** Called at every (re)connection once LISTEN is in effect; returns the removal. */
  onListening(handler: () => void): () => void;
  /** True while LISTEN is in effect (diagnostics, tests). */
  listening(): boolean;
  close(): Promise<void>;
}

export function createListener(o: ListenerOptions): Listener {
  const retryMs = o.retryMs ?? 100;
  const maxRetryMs = o.maxRetryMs ?? 5000;
  const log = o.logger?.child({ component: 'store', engine: 'postgres', part: 'listener' });
  const handlers = new Map<string, Set<(payload: string) => void>>();
  const listeningHandlers = new Set<() => void>();
  let client: pg.Client | undefined;
  let connecting = false;
  let timer: TimerHandle | undefined;
  let failures = 0;
  let closed = false;

  const retry = () => {
    if (closed || timer) return;
    const wait = Math.min(maxRetryMs, retryMs * 2 ** Math.min(failures, 16));
    failures++;
    timer = o.clock.setTimeout(() => {
      timer = undefined;
      void connect();
    }, wait);
  };

  const dispatch = (channel: string, payload: string) => {
    for (const h of [...(handlers.get(channel) ?? [])]) {
      try {
        h(payload);
      } catch (err) {
        log?.error({ err, channel }, 'a notification handler failed');
      }
    }
  };

  async function connect() {
    if (closed || connecting || client) return;
    connecting = true;
    const c = new pg.Client({
      connectionString: o.url,
      keepAlive: true,
      application_name: o.applicationName ?? 'parley-listen',
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
    c.on('notification', (m) => dispatch(m.channel, m.payload ?? ''));
    try {
      await c.connect();
      for (const channel of o.channels) await c.query(`LISTEN ${channel}`);
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
    // Whatever was sent before LISTEN took effect was never announced to us.
    for (const h of [...listeningHandlers]) {
      try {
        h();
      } catch (err) {
        log?.error({ err }, 'a listening handler failed');
      }
    }
  }

  const ensure = () => {
    if (!closed && !client && !timer) void connect();
  };

  return {
    on(channel, handler) {
      if (!o.channels.includes(channel)) throw new Error(`not listening to ${channel}`);
      let set = handlers.get(channel);
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      ensure();
      return () => void set.delete(handler);
    },
    onListening(handler) {
      listeningHandlers.add(handler);
      return () => void listeningHandlers.delete(handler);
    },
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
