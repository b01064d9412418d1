// Notices (NOTIFY) sent after the write they announce has committed, never inside it.
//
// A transaction that NOTIFYs takes one lock for the whole database cluster at commit and holds it until its commit
// record is flushed (PostgreSQL's async.c, PreCommit_Notify): every notifying transaction then commits one after
// another, each with its own flush, instead of sharing flushes. A job insert per webhook turned the commits of all
// webhooks into that queue (bench/webhook.ts on PostgreSQL: ratio 0.27–0.33 with the NOTIFY in the insert, 0.36–0.42
// without). So the repositories announce through `Db.announce`; the notices of a few milliseconds go out together
// in one statement of their own, whose commit does not wait for a flush (a notice is a wake-up, not data: a crash
// that loses it loses nothing stored). A statement per event-loop turn was not enough: under load it doubled the
// statements and gave the gain back (0.26–0.28). And none is sent while no other node listens (`othersListening`):
// this process's own workers hear of its jobs without the database. Listeners that may have missed notices rescan:
// at every (re)connection of the LISTEN connection, and when a peer node dies (what it committed and had not yet
// announced is found then).
import type { Clock, TimerHandle } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import { prepared, type Statement } from './db.ts';

const NOTIFY_ALL = prepared(
  'notify_all',
  `SELECT set_config('synchronous_commit', 'off', true), pg_notify(n.channel, n.payload)
   FROM unnest($1::text[], $2::text[]) AS n(channel, payload)`,
);
/** Notices announced within this window go out in one statement: other nodes hear of a job up to this much later. */
const WINDOW_MS = 5;
/** A batch that fails (the database away, no free connection) is tried again after this, a few times. */
const RETRY_MS = 1000;
const ATTEMPTS = 3;

export interface NoticeSender {
  announce(channel: string, payload: string): void;
  /** Whether another process listens (default: always). Announcements made while it says no are dropped. */
  setAudience(othersListening: () => boolean): void;
  /** Closing the store: sends what is waiting, tries nothing again, and resolves when every batch has an outcome. */
  close(): Promise<void>;
}

export function createNoticeSender(o: { run: (statement: Statement, values: unknown[]) => Promise<unknown>; clock: Clock; logger?: Logger }): NoticeSender {
  let waiting = new Map<string, [channel: string, payload: string]>();
  const sending = new Set<Promise<void>>();
  const retries = new Set<TimerHandle>();
  let closed = false;
  let othersListening = () => true;
  /** Set while a window is open: its notices go out when it closes. */
  let windowTimer: NodeJS.Timeout | undefined;

  const send = (batch: [string, string][], attempt: number) => {
    const p = o
      .run(NOTIFY_ALL, [batch.map(([c]) => c), batch.map(([, payload]) => payload)])
      .then(
        () => undefined,
        (err: unknown) => {
          if (closed) return;
          if (attempt >= ATTEMPTS) {
            o.logger?.warn(
              { notices: batch.length, err: { message: (err as Error).message } },
              'notices not sent; listeners find the work at their next rescan',
            );
            return;
          }
          const t = o.clock.setTimeout(() => {
            retries.delete(t);
            send(batch, attempt + 1);
          }, RETRY_MS);
          retries.add(t);
        },
      )
      .finally(() => sending.delete(p));
    sending.add(p);
  };

  const sendWaiting = () => {
    clearTimeout(windowTimer);
    windowTimer = undefined;
    if (waiting.size === 0) return;
    const batch = [...waiting.values()];
    waiting = new Map();
    send(batch, 1);
  };

  return {
    announce(channel, payload) {
      if (!othersListening()) return;
      waiting.set(`${channel}\n${payload}`, [channel, payload]);
      windowTimer ??= setTimeout(sendWaiting, WINDOW_MS);
    },
    setAudience(listening) {
      othersListening = listening;
    },
    async close() {
      sendWaiting();
      closed = true;
      for (const t of retries) o.clock.clearTimeout(t);
      retries.clear();
      await Promise.allSettled([...sending]);
    },
  };
}
