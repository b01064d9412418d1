// The cluster bus on PostgreSQL: NOTIFY on one channel, heard through the store's LISTEN connection (listener.ts).
// A notice is `<topic> <payload>`; a payload longer than BUS_NOTICE_BYTES is stored in bus_payloads (migration 006)
// and the notice carries `<topic> @<id>` instead (NOTIFY refuses payloads of 8,000 bytes and more).
import type { Logger } from '../../logger.ts';
import { BUS_NOTICE_BYTES, type ClusterBus } from '../repos.ts';
import type { Listener } from './listener.ts';
import { prepared, type Db } from './db.ts';

export const BUS_CHANNEL = 'parley_bus';

// A notice alone is a wake-up with nothing stored: its commit need not wait for a flush, which it would do holding
// the cluster-wide lock every NOTIFY takes at commit (notices.ts).
const NOTIFY = prepared('bus_notify', `SELECT set_config('synchronous_commit', 'off', true), pg_notify('${BUS_CHANNEL}', $1)`);
const NOTIFY_STORED = prepared(
  'bus_notify_stored',
  `WITH stored AS (INSERT INTO bus_payloads (body) VALUES ($2) RETURNING id)
   SELECT pg_notify('${BUS_CHANNEL}', $1 || ' @' || stored.id) FROM stored`,
);
const READ_STORED = prepared('bus_read_stored', 'SELECT body FROM bus_payloads WHERE id = $1');
const PRUNE = prepared('bus_prune', `DELETE FROM bus_payloads WHERE created_at < now() - interval '1 minute'`);
/** Stored payloads between two prunes. */
const PRUNE_EVERY = 200;

export function postgresBus(db: Db, notifications: Listener, logger?: Logger): ClusterBus {
  const log = logger?.child({ component: 'store', engine: 'postgres', part: 'bus' });
  const topics = new Map<string, Set<(payload: string) => void>>();
  let stored = 0;
  let stopListening: (() => void) | undefined;

  const deliver = (topic: string, payload: string) => {
    for (const l of [...(topics.get(topic) ?? [])]) {
      try {
        l(payload);
      } catch (err) {
        log?.error({ err, topic }, 'a bus listener failed');
      }
    }
  };

  const onNotice = (notice: string) => {
    const space = notice.indexOf(' ');
    if (space <= 0) return;
    const topic = notice.slice(0, space);
    if (!topics.get(topic)?.size) return;
    const rest = notice.slice(space + 1);
    if (!rest.startsWith('@')) return deliver(topic, rest);
    // Stored: read it (the notice is sent on commit, so the row is there).
    db.rows<{ body: string }>(READ_STORED, [Number(rest.slice(1))]).then(
      ([row]) => row && deliver(topic, row.body),
      (err: unknown) => log?.warn({ err: { message: (err as Error).message }, topic }, 'a stored bus payload could not be read'),
    );
  };

  return {
    async publish(topic, payload) {
      if (topic.includes(' ')) throw new Error(`a bus topic has no spaces: "${topic}"`);
      if (Buffer.byteLength(payload) + topic.length + 1 <= BUS_NOTICE_BYTES) {
        await db.rows(NOTIFY, [`${topic} ${payload}`]);
        return;
      }
      await db.rows(NOTIFY_STORED, [topic, payload]);
      if (++stored % PRUNE_EVERY === 0) await db.rows(PRUNE, []).catch(() => undefined);
    },
    subscribe(topic, listener) {
      let set = topics.get(topic);
      if (!set) topics.set(topic, (set = new Set()));
      set.add(listener);
      stopListening ??= notifications.on(BUS_CHANNEL, onNotice);
      return () => void set.delete(listener);
    },
    onResync: (handler) => notifications.onListening(handler),
    listening: () => notifications.listening(),
    close: async () => {
      stopListening?.();
      topics.clear();
    },
  };
}
