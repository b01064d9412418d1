// A segment is one flush's records of one table, sorted by id and encoded back to back
// (codec.ts), stored under its smallest id. One LMDB write per flush instead of one per
// record, and nothing kept as JS objects between flushes: see SEGMENTS.md.
import type { RecordCodec } from './codec.ts';
import { SEGMENT_SPAN_MS, timeOrderedId } from './keys.ts';

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

export const isSegment = (v: unknown): v is SegmentValue =>
  typeof v === 'object' && v !== null && (v as SegmentValue).v === 1 && (v as SegmentValue).body instanceof Uint8Array;

/** A value written before segments: one record under its own id. */
const isLegacyRecord = (v: unknown): v is { id: string } =>
  typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string' && !Array.isArray(v);

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

/** Collects encoded records between flushes; `cut` turns them into segments. Ids are kept as
 * numbers (ms, sequence), not strings: whatever lives until the next flush outlasts a young-generation
 * GC, and numbers in an array cost the GC nothing. The byte buffer is reused from flush to flush. */
export function createSegmentBuilder(initialBytes = 64 * 1024) {
  let bytes = Buffer.allocUnsafe(initialBytes);
  let length = 0;
  const ms: number[] = [];
  const seqs: number[] = [];
  const starts: number[] = [];
  const conversations: (string | undefined)[] = [];

  const idOf = (i: number) => timeOrderedId(ms[i], seqs[i]);
  const before = (i: number, j: number) => ms[i] < ms[j] || (ms[i] === ms[j] && seqs[i] < seqs[j]);

  const segment = (members: number[], body: Uint8Array, offsets: number[]): BuiltSegment => {
    const refs = new Map<string, number[]>();
    for (let k = 0; k < members.length; k++) {
      const c = conversations[members[k]];
      if (c === undefined) continue;
      const list = refs.get(c);
      if (list) list.push(offsets[k]);
      else refs.set(c, [offsets[k]]);
    }
    const maxId = idOf(members[members.length - 1]);
    return { key: idOf(members[0]), value: { v: 1, maxId, count: members.length, conversations: [...refs.keys()], body }, refs };
  };

  return {
    get count() {
      return ms.length;
    },
    add(id: string, conversationId: string | undefined, encoded: Uint8Array) {
      if (length + encoded.length > bytes.length) {
        const grown = Buffer.allocUnsafe(Math.max(bytes.length * 2, length + encoded.length));
        bytes.copy(grown, 0, 0, length);
        bytes = grown;
      }
      bytes.set(encoded, length);
      const dash = id.indexOf('-');
      ms.push(Number(id.slice(0, dash)));
      seqs.push(Number(id.slice(dash + 1)));
      starts.push(length);
      conversations.push(conversationId);
      length += encoded.length;
    },
    /**
     * Everything added since the last cut, as segments (usually one); the builder starts empty again.
     * A segment's body may be a view of the builder's buffer: write it before the next `add`.
     */
    cut(): BuiltSegment[] {
      const n = ms.length;
      if (n === 0) return [];
      const len = length;
      const sizeOf = (i: number) => (i + 1 < n ? starts[i + 1] : len) - starts[i];
      let sorted = true;
      for (let i = 1; i < n && sorted; i++) sorted = before(i - 1, i);
      let out: BuiltSegment[];
      if (sorted && ms[n - 1] - ms[0] < SEGMENT_SPAN_MS) {
        out = [
          segment(
            Array.from({ length: n }, (_, i) => i),
            bytes.subarray(0, len),
            starts.slice(),
          ),
        ];
      } else {
        // Producer-given times out of order (or far apart): sort, then cut wherever a segment would span too long.
        const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => (before(x, y) ? -1 : 1));
        out = [];
        for (let from = 0; from < n;) {
          let to = from + 1;
          while (to < n && ms[order[to]] - ms[order[from]] < SEGMENT_SPAN_MS) to++;
          const members = order.slice(from, to);
          const body = Buffer.allocUnsafe(members.reduce((sum, i) => sum + sizeOf(i), 0));
          const offsets: number[] = [];
          let at = 0;
          for (const i of members) {
            offsets.push(at);
            bytes.copy(body, at, starts[i], starts[i] + sizeOf(i));
            at += sizeOf(i);
          }
          out.push(segment(members, body, offsets));
          from = to;
        }
      }
      length = 0;
      ms.length = 0;
      seqs.length = 0;
      starts.length = 0;
      conversations.length = 0;
      return out;
    },
  };
}
