// A segment is one flush's records of one table, sorted by id and encoded back to back
// (codec.ts), stored under its smallest id. One LMDB write per flush instead of one per
// record, and nothing kept as JS objects between flushes: see SEGMENTS.md.
import type { RecordCodec } from './codec.ts';
import { msOf, SEGMENT_SPAN_MS } from './keys.ts';

export interface SegmentValue {
  v: 1;
  /** The newest record's id: retention drops a segment once this is past. */
  maxId: string;
  count: number;
  /** Whose records are inside, for retention to fix their index entries. */
  conversations: string[];
  body: Uint8Array;
}

export interface BuiltSegment {
  key: string;
  value: SegmentValue;
  /** Byte offsets of each conversation's records in `body`. */
  refs: Map<string, number[]>;
}

export const isSegment = (v: unknown): v is SegmentValue => typeof v === 'object' && v !== null && (v as SegmentValue).v === 1 && (v as SegmentValue).body instanceof Uint8Array;

/** A value written before segments: one record under its own id. */
const isLegacyRecord = (v: unknown): v is { id: string } => typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string' && !Array.isArray(v);

/** The records of a stored value, sorted by id: all of them, or those at `offsets`. Unknown values hold none. */
export function recordsOf<T extends { id: string }>(value: unknown, codec: RecordCodec<T>, offsets?: number[]): T[] {
  if (isSegment(value)) return offsets ? offsets.map((o) => codec.decodeAt(value.body, o)) : codec.decodeAll(value.body);
  if (isLegacyRecord(value)) return [value as unknown as T];
  return [];
}

/** The newest id in a stored value (a segment or a one-record legacy value). */
export function maxIdOf(key: string, value: unknown): string {
  return isSegment(value) ? value.maxId : key;
}

/** How many records a stored value holds. */
export function countOf(value: unknown): number {
  return isSegment(value) ? value.count : isLegacyRecord(value) ? 1 : 0;
}

export function conversationsOf(value: unknown): string[] {
  if (isSegment(value)) return value.conversations;
  const c = isLegacyRecord(value) ? (value as { conversationId?: unknown }).conversationId : undefined;
  return typeof c === 'string' ? [c] : [];
}

/** Collects encoded records between flushes; `cut` turns them into segments. */
export function createSegmentBuilder(initialBytes = 64 * 1024) {
  let bytes = Buffer.allocUnsafe(initialBytes);
  let length = 0;
  let ids: string[] = [];
  let starts: number[] = [];
  let conversations: (string | undefined)[] = [];

  const segment = (key: string, maxId: string, body: Uint8Array, conversationOf: (i: number) => string | undefined, offsets: number[]): BuiltSegment => {
    const refs = new Map<string, number[]>();
    for (let i = 0; i < offsets.length; i++) {
      const c = conversationOf(i);
      if (c === undefined) continue;
      const list = refs.get(c);
      if (list) list.push(offsets[i]);
      else refs.set(c, [offsets[i]]);
    }
    return { key, value: { v: 1, maxId, count: offsets.length, conversations: [...refs.keys()], body }, refs };
  };

  return {
    get count() {
      return ids.length;
    },
    add(id: string, conversationId: string | undefined, encoded: Uint8Array) {
      if (length + encoded.length > bytes.length) {
        const grown = Buffer.allocUnsafe(Math.max(bytes.length * 2, length + encoded.length));
        bytes.copy(grown, 0, 0, length);
        bytes = grown;
      }
      bytes.set(encoded, length);
      starts.push(length);
      ids.push(id);
      conversations.push(conversationId);
      length += encoded.length;
    },
    /** Everything added since the last cut, as segments (usually one); the builder starts empty again. */
    cut(): BuiltSegment[] {
      const n = ids.length;
      if (n === 0) return [];
      const [b, len, idList, startList, convList] = [bytes, length, ids, starts, conversations];
      bytes = Buffer.allocUnsafe(Math.max(initialBytes, Math.min(len * 2, 1 << 22)));
      length = 0;
      ids = [];
      starts = [];
      conversations = [];

      let sorted = true;
      for (let i = 1; i < n && sorted; i++) sorted = idList[i - 1] < idList[i];
      if (sorted && msOf(idList[n - 1]) - msOf(idList[0]) < SEGMENT_SPAN_MS) {
        return [segment(idList[0], idList[n - 1], b.subarray(0, len), (i) => convList[i], startList)];
      }
      // Producer-given times out of order (or far apart): sort, then cut wherever a segment would span too long.
      const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => (idList[x] < idList[y] ? -1 : 1));
      const sizeOf = (i: number) => (i + 1 < n ? startList[i + 1] : len) - startList[i];
      const out: BuiltSegment[] = [];
      for (let from = 0; from < n; ) {
        const firstMs = msOf(idList[order[from]]);
        let to = from + 1;
        while (to < n && msOf(idList[order[to]]) - firstMs < SEGMENT_SPAN_MS) to++;
        const members = order.slice(from, to);
        const body = Buffer.allocUnsafe(members.reduce((s, i) => s + sizeOf(i), 0));
        const offsets: number[] = [];
        let at = 0;
        for (const i of members) {
          offsets.push(at);
          b.copy(body, at, startList[i], startList[i] + sizeOf(i));
          at += sizeOf(i);
        }
        out.push(segment(idList[members[0]], idList[members[members.length - 1]], body, (k) => convList[members[k]], offsets));
        from = to;
      }
      return out;
    },
  };
}
