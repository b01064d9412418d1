// The telemetry recorder alone: the records of one turn (message in/out, turn
// start/end, a tool call, two LLM calls) for many turns across 200
// conversations, written to a real LMDB; CPU µs per turn (all threads).
// The records are built the way ConversationHost builds them (properties first, then the shared
// fields: see test/unit/object-spread.test.ts).
// TELEMETRY_OFF=1 measures the same loop with persistence off (the loop's own cost).
// BENCH_ENGINE=postgres: the records go to PostgreSQL's tables (a server of the bench's own, fsync on); the figure
// then adds the database server's CPU (all its processes).
//   npx tsx bench/telemetry-recorder.ts
import { createClock } from '../src/clock.ts';
import { createLogger } from '../src/logger.ts';
import { openLmdbStore } from '../src/store/lmdb/index.ts';
import { openPostgresStore } from '../src/store/postgres/store.ts';
import { createTelemetryRecorder } from '../src/telemetry/recorder.ts';
import { tempDir } from '../test/support/parley.ts';
import { benchStorage, log, onEngine, postgresCpuMs, startBenchPostgres } from './lib.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 20_000);
const postgres = await startBenchPostgres();
const storage = await benchStorage(postgres);
const store = storage ? await openPostgresStore({ url: storage.url }) : await openLmdbStore({ path: tempDir('parley-recorder-') });
const t = createTelemetryRecorder({ store, clock: createClock(), logger: createLogger('error'), enabled: process.env.TELEMETRY_OFF !== '1' });

async function run(n: number) {
  for (let i = 0; i < n; i++) {
    const conversationId = `conv_web_t-${i % 200}`;
    const customerId = `t-${i % 200}`;
    const turnId = `${conversationId}:b${i}`;
    const base = { conversationId, customerId, customerExternalId: customerId, channel: 'web' };
    const call = { turnId, conversationId, customerId, provider: 'offline', model: 'offline-1', purpose: 'chat', durationMs: 1, ok: true };
    t.event({ type: 'message.in', data: { messageId: `b${i}`, turnId, length: 33 }, ...base });
    t.event({ type: 'turn.started', data: { turnId, messageId: `b${i}` }, ...base });
    t.turnCall({ sequence: 1, promptTokens: 60, completionTokens: 8, toolCalls: ['getOrderStatus'], ...call });
    t.event({ type: 'tool.invoked', data: { turnId, callId: 'c1', name: 'getOrderStatus' }, ...base });
    t.event({ type: 'tool.result', data: { turnId, callId: 'c1', name: 'getOrderStatus', durationMs: 1 }, ...base });
    t.turnCall({ sequence: 2, promptTokens: 70, completionTokens: 9, toolCalls: [], ...call });
    t.event({ type: 'message.out', data: { id: `o${i}`, turnId, length: 40 }, ...base });
    t.event({ type: 'turn.ended', data: { turnId, messageId: `b${i}` }, ...base });
    if (i % 100 === 99) await new Promise((r) => setImmediate(r));
  }
  await t.flush();
}

await run(2000); // warm-up
const before = process.cpuUsage();
const postgresBefore = postgres ? postgresCpuMs(postgres) : 0;
await run(TURNS);
const cpu = process.cpuUsage(before);
const postgresUs = postgres ? (postgresCpuMs(postgres) - postgresBefore) * 1000 : 0;
log(
  `recorder${onEngine()} (${process.env.TELEMETRY_OFF === '1' ? 'persistence off' : 'persisting'}): ${((cpu.user + cpu.system + postgresUs) / TURNS).toFixed(1)} µs CPU per turn over ${TURNS} turns` +
    (postgres ? ` (of which PostgreSQL's processes ${(postgresUs / TURNS).toFixed(1)} µs)` : ''),
);
await store.close();
await postgres?.close();
