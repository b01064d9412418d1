// Deletes telemetry a segment at a time (once its newest record is past the cutoff), in batches, together with
// every reference to the segments it removes.
import type { Key, Kv } from '../kv.ts';
import type { PendingRefs } from './compaction.ts';
import { conversationIndexRange, legacyConversationIndexRange, PENDING_END, PENDING_START } from './keys.ts';
import { conversationsOf, countOf, maxIdOf } from './segment.ts';
import type { TelemetryTable } from './segment-reader.ts';

const BATCH = 200; // segments (or legacy one-record values) per transaction

/** Drops references to `gone` segments from an index entry or a pending-references value; undefined when unchanged. */
function withoutRefs(value: unknown, gone: Set<string>, pending: boolean): unknown[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const keyOf = (ref: unknown) => (pending ? (ref as PendingRefs[number])[1] : typeof ref === 'string' ? ref : (ref as unknown[])[0]) as string;
  const kept = value.filter((ref) => !gone.has(keyOf(ref)));
  return kept.length === value.length ? undefined : kept;
}

/** Removes the segments of `name` whose newest record is older than `cutoff` (a key); resolves with the records removed. */
export async function pruneTelemetryTable(kv: Kv, name: TelemetryTable, cutoff: string): Promise<number> {
  let total = 0;
  let start = '';
  for (;;) {
    const gone = new Set<string>();
    const conversations = new Set<string>();
    let records = 0;
    let last: string | undefined;
    for (const { key, value } of kv.range<unknown>(name, { start, end: cutoff, limit: BATCH })) {
      last = key as string;
      // A segment straddling the cutoff stays until its newest record is past it.
      if (maxIdOf(last, value) >= cutoff) continue;
      gone.add(last);
      records += countOf(value);
      for (const c of conversationsOf(value)) conversations.add(c);
    }
    if (last === undefined) return total;
    start = `${last}\u0000`;
    if (gone.size === 0) continue;
    const rewrites: { key: Key; value: unknown[] }[] = [];
    // Index entries are keyed by their smallest segment: those at or past the cutoff reference nothing pruned.
    for (const c of conversations) {
      const legacy = legacyConversationIndexRange(c, cutoff);
      for (const range of legacy ? [conversationIndexRange(c, cutoff), legacy] : [conversationIndexRange(c, cutoff)]) {
        for (const { key, value } of kv.range<unknown>(name, range)) {
          const kept = withoutRefs(value, gone, false);
          if (kept) rewrites.push({ key, value: kept });
        }
      }
    }
    for (const { key, value } of kv.range<unknown>(name, { start: PENDING_START, end: PENDING_END })) {
      const kept = withoutRefs(value, gone, true);
      if (kept) rewrites.push({ key, value: kept });
    }
    await kv.transaction(async (tx) => {
      for (const k of gone) await tx.remove(name, k);
      for (const r of rewrites) {
        if (r.value.length) await tx.put(name, r.key, r.value);
        else await tx.remove(name, r.key);
      }
    });
    total += records;
  }
}
