// Records inside a segment are msgpack tuples, one after another: no field names,
// so a record costs its values only, and a segment is decoded in one pass or at
// one record's byte offset. Changing a tuple means a new segment version (segment.ts).
import { Packr, Unpackr } from 'msgpackr';
import type { TelemetryEvent, TurnCallRecord } from '../../telemetry-records.ts';

export interface RecordCodec<T extends { id: string }> {
  /** The record's bytes; valid until the next `encode` of any msgpackr user, so copy them at once. */
  encode(record: T): Uint8Array;
  decodeAll(body: Uint8Array): T[];
  decodeAt(body: Uint8Array, offset: number): T;
}

function codec<T extends { id: string }>(toTuple: (r: T) => unknown[], fromTuple: (t: unknown[]) => T): RecordCodec<T> {
  const packr = new Packr({ useRecords: false });
  const unpackr = new Unpackr({ useRecords: false });
  return {
    encode: (r) => packr.pack(toTuple(r)),
    decodeAll(body) {
      const out: T[] = [];
      unpackr.unpackMultiple(body as Buffer, (t: unknown) => {
        out.push(fromTuple(t as unknown[]));
      });
      return out;
    },
    decodeAt(body, offset) {
      let tuple: unknown[] | undefined;
      unpackr.unpackMultiple((body as Buffer).subarray(offset), (t: unknown) => {
        tuple = t as unknown[];
        return false;
      });
      if (!tuple) throw new Error(`no record at offset ${offset}`);
      return fromTuple(tuple);
    },
  };
}

// The field lists are spelled out, not derived from a list of names: one object literal per kind
// gives every decoded record the same hidden class (see src/README.md), and this runs per record.
export const eventCodec = (): RecordCodec<TelemetryEvent> =>
  codec<TelemetryEvent>(
    (e) => [e.id, e.at, e.type, e.conversationId, e.customerId, e.customerExternalId, e.channel, e.data],
    (t) => ({
      id: t[0] as string,
      at: t[1] as number,
      type: t[2] as string,
      conversationId: t[3] as string | undefined,
      customerId: t[4] as string | undefined,
      customerExternalId: t[5] as string | undefined,
      channel: t[6] as string | undefined,
      data: t[7] as Record<string, unknown>,
    }),
  );

export const turnCallCodec = (): RecordCodec<TurnCallRecord> =>
  codec<TurnCallRecord>(
    (r) => [
      r.id,
      r.turnId,
      r.conversationId,
      r.customerId,
      r.sequence,
      r.at,
      r.provider,
      r.model,
      r.purpose,
      r.durationMs,
      r.promptTokens,
      r.completionTokens,
      r.toolCalls,
      r.ok,
      r.error,
      // Appended (records written before have no such elements: they decode as absent).
      r.cachedPromptTokens,
      r.cost,
    ],
    (t) => ({
      id: t[0] as string,
      turnId: t[1] as string,
      conversationId: t[2] as string,
      customerId: t[3] as string,
      sequence: t[4] as number,
      at: t[5] as number,
      provider: t[6] as string,
      model: t[7] as string,
      purpose: t[8] as string,
      durationMs: t[9] as number,
      promptTokens: t[10] as number,
      completionTokens: t[11] as number,
      toolCalls: t[12] as string[],
      ok: t[13] as boolean,
      error: t[14] as string | undefined,
      cachedPromptTokens: t[15] as number | undefined,
      cost: t[16] as number | undefined,
    }),
  );

/** Both tables' codecs, by table name. */
export const codecs = () => ({ telemetry: eventCodec(), turnCalls: turnCallCodec() });
export type Codecs = ReturnType<typeof codecs>;
