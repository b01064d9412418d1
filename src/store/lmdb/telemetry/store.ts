// Telemetry on LMDB: segments of encoded records keyed by time-ordered ids, with a per-conversation index
// (SEGMENTS.md). Reads merge segments in id order; a `conversationId` filter decodes only that conversation's
// records, found through its index.
import type { Logger } from '../../../logger.ts';
import { keyAt } from '../../telemetry-records.ts';
import type { TelemetryEvent, TurnCallRecord } from '../../telemetry-records.ts';
import type { TelemetryFilter, TelemetryKind, TelemetryPage, TelemetryStore } from '../../repos.ts';
import { isStoreUnavailable } from '../../errors.ts';
import type { Kv } from '../kv.ts';
import { eventCodec, turnCallCodec, type RecordCodec } from './codec.ts';
import { compactConversationIndex } from './compaction.ts';
import { backfillConversationIndex } from './index-backfill.ts';
import { pruneTelemetryTable } from './prune.ts';
import { readConversation, readRange, type TelemetryTable } from './segment-reader.ts';
import { createLmdbTelemetryWriter } from './writer.ts';

const COMPACT_EVERY_MS = 5000;
/** The recent-conversations list walks at most this many of the newest events. */
const MAX_EVENTS_SCANNED = 20_000;

function matchesType(type: string, filter: string | undefined): boolean {
  if (!filter) return true;
  if (filter.endsWith('.*')) return type.startsWith(filter.slice(0, -1));
  return type === filter;
}

/** One page: records in id order inside the window, after the cursor, that match. */
function scan<T extends { id: string; conversationId?: string }>(
  kv: Kv,
  table: TelemetryTable,
  codec: RecordCodec<T>,
  f: TelemetryFilter,
  match: (r: T) => boolean,
): TelemetryPage<T> {
  const desc = f.order === 'desc';
  let lower = f.since !== undefined ? keyAt(f.since) : undefined;
  let upper = f.until !== undefined ? keyAt(f.until + 1) : undefined;
  if (f.cursor && desc && (upper === undefined || f.cursor < upper)) upper = f.cursor;
  if (f.cursor && !desc && (lower === undefined || f.cursor >= lower)) lower = `${f.cursor}\u0000`;
  const bounds = { lower, upper, reverse: desc };
  const records = f.conversationId !== undefined ? readConversation(kv, table, codec, f.conversationId, bounds) : readRange(kv, table, codec, bounds);
  const items: T[] = [];
  let more = false;
  for (const r of records) {
    if (!match(r)) continue;
    if (items.length === f.limit) {
      more = true;
      break;
    }
    items.push(r);
  }
  return { items, nextCursor: more ? items[items.length - 1].id : null };
}

export function lmdbTelemetry(kv: Kv, logger?: Logger): TelemetryStore {
  let compactTimer: NodeJS.Timeout | undefined;
  const compact = async () => {
    for (const table of ['telemetry', 'turnCalls'] as const) await compactConversationIndex(kv, table);
  };
  return {
    writer: () => createLmdbTelemetryWriter(kv, logger),
    events: async (f) =>
      scan<TelemetryEvent>(
        kv,
        'telemetry',
        eventCodec(),
        f,
        (e) =>
          matchesType(e.type, f.type) &&
          (!f.conversationId || e.conversationId === f.conversationId) &&
          (!f.customerId || e.customerId === f.customerId) &&
          (!f.customerExternalId ||
            e.customerExternalId === f.customerExternalId ||
            (e.customerId !== undefined && (f.customerIds ?? []).includes(e.customerId))) &&
          (!f.turnId || (e.data as { turnId?: string }).turnId === f.turnId),
      ),
    turnCalls: async (f) =>
      scan<TurnCallRecord>(
        kv,
        'turnCalls',
        turnCallCodec(),
        f,
        (r) =>
          matchesType(r.purpose, f.type) &&
          (!f.conversationId || r.conversationId === f.conversationId) &&
          (!f.customerId || r.customerId === f.customerId) &&
          // A turn call carries only the customer's id: an external id matches through the ids it resolved to.
          (!f.customerExternalId || (f.customerIds ?? []).includes(r.customerId)) &&
          (!f.turnId || r.turnId === f.turnId),
      ),
    async *window<K extends TelemetryKind>(kind: K, o: { since: number; until: number }): AsyncIterable<K extends 'events' ? TelemetryEvent : TurnCallRecord> {
      const bounds = { lower: keyAt(o.since), upper: keyAt(o.until + 1) };
      const source = kind === 'events' ? readRange(kv, 'telemetry', eventCodec(), bounds) : readRange(kv, 'turnCalls', turnCallCodec(), bounds);
      for (const r of source) yield r as K extends 'events' ? TelemetryEvent : TurnCallRecord;
    },
    async recentConversationIds(limit) {
      const ids: string[] = [];
      const seen = new Set<string>();
      let scanned = 0;
      for (const e of readRange<TelemetryEvent>(kv, 'telemetry', eventCodec(), { reverse: true })) {
        if (++scanned > MAX_EVENTS_SCANNED || ids.length >= limit) break;
        if (e.conversationId && !seen.has(e.conversationId)) {
          seen.add(e.conversationId);
          ids.push(e.conversationId);
        }
      }
      return ids;
    },
    async prune(before) {
      const cutoff = keyAt(before);
      return (await pruneTelemetryTable(kv, 'telemetry', cutoff)) + (await pruneTelemetryTable(kv, 'turnCalls', cutoff));
    },
    start() {
      // Telemetry written before the conversation index existed gets its index once, in the background.
      void backfillConversationIndex(kv, logger ?? noLogger).catch((err) => logger?.warn({ err }, 'telemetry index backfill failed'));
      compactTimer = setInterval(() => {
        compact().catch((err) => {
          if (!isStoreUnavailable(err)) logger?.warn({ err }, 'telemetry index compaction failed');
        });
      }, COMPACT_EVERY_MS);
      compactTimer.unref();
    },
    async stop() {
      clearInterval(compactTimer);
      compactTimer = undefined;
      await compact().catch((err) => logger?.warn({ err }, 'telemetry index compaction failed'));
    },
  };
}

const noLogger = { info: () => undefined, warn: () => undefined } as unknown as Logger;
