// Telemetry records wait in memory and go to PostgreSQL in one statement per flush: each table's batch as one
// multi-row INSERT … SELECT FROM json_to_recordset(one JSON document), both tables in one round trip. Flushes run one after another,
// so a flush resolves only once what was added before it is written. A batch the database could not take now (it
// is away) goes back to the front of the queue for the next flush; one it refuses (a malformed record) is dropped,
// since retrying it would fail the same way forever. What waits is bounded (MAX_WAITING): past it, new records are
// dropped, so a long outage cannot grow memory without end; the oldest are kept (they show how the outage began).
import type { TelemetryEvent, TurnCallRecord } from '../telemetry-records.ts';
import type { TelemetryWriter } from '../repos.ts';
import { prepared, type Db } from './db.ts';
import { eventsJson, turnCallsJson } from './telemetry-rows.ts';
import { unavailability } from './unavailable.ts';

// ON CONFLICT: a flush whose COMMIT was sent but whose answer was lost is written again by the next one.
const INSERT = prepared(
  'telemetry_insert',
  `WITH events AS (
     INSERT INTO telemetry_events (id, at, type, conversation_id, customer_id, customer_external_id, channel, turn_id, data)
     SELECT * FROM json_to_recordset($1::json) AS r(id text, at bigint, type text, conversation_id text, customer_id text,
       customer_external_id text, channel text, turn_id text, data json)
     ON CONFLICT (id) DO NOTHING
   ), calls AS (
     INSERT INTO telemetry_turn_calls (id, at, turn_id, conversation_id, customer_id, sequence, provider, model, purpose, duration_ms,
       prompt_tokens, completion_tokens, cached_prompt_tokens, cost, tool_calls, ok, error)
     SELECT * FROM json_to_recordset($2::json) AS r(id text, at bigint, turn_id text, conversation_id text, customer_id text,
       sequence integer, provider text, model text, purpose text, duration_ms float8, prompt_tokens integer, completion_tokens integer,
       cached_prompt_tokens integer, cost float8, tool_calls json, ok boolean, error text)
     ON CONFLICT (id) DO NOTHING
   )
   SELECT 1`,
);

/** At most this many records wait in memory (a few tens of MB); the recorder counts what was dropped. */
export const MAX_WAITING = 50_000;

export function createPostgresTelemetryWriter(db: Db, o: { onDropped?: (records: number, err: unknown) => void; maxWaiting?: number } = {}): TelemetryWriter {
  const maxWaiting = o.maxWaiting ?? MAX_WAITING;
  let events: TelemetryEvent[] = [];
  let calls: TurnCallRecord[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  /** Records taken by a flush and not written yet. */
  let writing = 0;

  const write = async (batchEvents: TelemetryEvent[], batchCalls: TurnCallRecord[]): Promise<number> => {
    const n = batchEvents.length + batchCalls.length;
    if (n === 0) return 0;
    try {
      await db.rows(INSERT, [eventsJson(batchEvents), turnCallsJson(batchCalls)]);
      return n;
    } catch (err) {
      if (unavailability(err)) {
        events = batchEvents.concat(events);
        calls = batchCalls.concat(calls);
      } else {
        o.onDropped?.(n, err);
      }
      throw err;
    } finally {
      writing -= n;
    }
  };

  const pending = () => events.length + calls.length + writing;

  return {
    addEvent(e) {
      if (pending() < maxWaiting) events.push(e);
    },
    addTurnCall(r) {
      if (pending() < maxWaiting) calls.push(r);
    },
    pending,
    flush() {
      // The batch is what was added before this call; it is written once the flushes before it have settled.
      const batchEvents = events;
      const batchCalls = calls;
      events = [];
      calls = [];
      writing += batchEvents.length + batchCalls.length;
      const next = chain.then(() => write(batchEvents, batchCalls));
      chain = next.catch(() => undefined);
      return next;
    },
  };
}
