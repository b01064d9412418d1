// The outcome is folded in by the conversation's own write (issue 31, part 6), on the run's engine (LMDB, or
// PostgreSQL in the postgres project), through a real widget and a real SDK backend with the offline model:
// - a turn with one SDK call makes no transaction besides the conversation's writes: the record is already current
//   when the write of the customer's message, and then the reply's, has committed (read before anything else runs);
//   the tool call's writes, which carry no outcome fact, stay the store's plain (one-statement) writes;
// - an outcome write that fails fails the conversation's write with it (nothing of it is stored), and the write tried
//   again folds its facts once: "thanks" resolves the conversation once, not resolved and then reopened;
// - a write the store answers `seen` (a customer message it has already) folds nothing, and the write tried without
//   that message does not fold it either.
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationOutcome } from '../../src/store/outcomes.ts';
import type { PersistOutcome, Store, StoreRepos } from '../../src/store/repos.ts';
import type { TelemetryEvent } from '../../src/telemetry/types.ts';
import { functionRegistered } from '../support/demo-backend.ts';
import { orderBackend } from '../support/order-backend.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { until } from '../support/whatsapp.ts';
import { askAndAwaitReply, startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** The machine running the tests is shared and loaded: a turn may take seconds. */
const SLOW = 30_000;

/**
 * One committed `persist`: the roles it stored, whether it came with writes of its own, the version it wrote when that
 * was at the version the writer expected (nobody else wrote meanwhile), the outcome right after it.
 */
interface Write {
  roles: string[];
  alone: boolean;
  version: number | undefined;
  outcome: ConversationOutcome | undefined;
}

/**
 * Every committed `persist` from now on, with the outcome read as soon as it committed (before the write loop goes on
 * to publish it), and the count of the store's other transactions.
 */
function watchWrites(store: Store): { writes: Write[]; transactions: () => number } {
  const writes: Write[] = [];
  let transactions = 0;
  const persist = store.conversations.persist.bind(store.conversations);
  store.conversations.persist = async (record, messages, expected, channelWrites) => {
    const result: PersistOutcome = await persist(record, messages, expected, channelWrites);
    if ('version' in result) {
      const outcome = await store.outcomes.get(record.conversationId);
      const version = expected.version !== undefined && !result.othersWrote ? result.version : undefined;
      writes.push({ roles: messages.map((m) => m.role), alone: channelWrites === undefined, version, outcome });
    }
    return result;
  };
  const transaction = store.transaction.bind(store);
  store.transaction = (fn) => {
    transactions++;
    return transaction(fn);
  };
  return { writes, transactions: () => transactions };
}

/** The next `persist`es: their writes of their own see an outcome repository whose `put` throws, `times` times. */
function failOutcomePuts(store: Store, times: number): () => number {
  let failed = 0;
  const persist = store.conversations.persist.bind(store.conversations);
  store.conversations.persist = (record, messages, expected, channelWrites) => {
    const failing =
      channelWrites &&
      ((tx: StoreRepos) => {
        const outcomes = Object.assign({}, tx.outcomes, {
          put: async (o: ConversationOutcome) => {
            if (failed < times) {
              failed++;
              throw new Error('outcome write refused (test)');
            }
            return tx.outcomes.put(o);
          },
        });
        return channelWrites(Object.create(tx, { outcomes: { value: outcomes } }) as StoreRepos);
      });
    return persist(record, messages, expected, failing);
  };
  return () => failed;
}

/** `answered`: what the backend's function waits for before it answers (the test's gate). */
async function setup(answered: () => Promise<void> = async () => undefined): Promise<{ p: TestParley; w: WidgetClient }> {
  const p = await startParley({ config: { logging: { level: 'warn' } } });
  open.push(p);
  const handler = async (a: { orderId: string }) => (await answered(), { orderId: a.orderId, status: 'shipped' });
  open.push({ close: await orderBackend([p.url()], 'getOrderStatus', { handler }) });
  await functionRegistered(p, 'getOrderStatus', SLOW);
  const w = await startWidgetSession(p.url(), { customerId: 'folded-1', email: 'folded@example.com' });
  open.push(w);
  return { p, w };
}

const ask = (w: WidgetClient, id: string, text: string) => askAndAwaitReply(w, id, text, SLOW);

const CONVERSATION = 'conv_web_folded-1';

describe("the outcome in the conversation's write", () => {
  it('a turn with one SDK call: the outcome is current as each write commits, with no transaction of its own', async () => {
    // The function answers once the call's start is stored: that write is the tool call's alone.
    let watched: ReturnType<typeof watchWrites> | undefined;
    const toolOnly = (x: Write) => !x.roles.includes('user') && !x.roles.includes('assistant');
    const { p, w } = await setup(() => until(async () => watched?.writes.some(toolOnly), Boolean, SLOW).then(() => undefined));
    const store = p.services.store;
    // The first turn activates the conversation (its reads and first writes are not what is measured).
    await ask(w, 'm1', 'hello');
    watched = watchWrites(store);
    expect((await ask(w, 'm2', 'what is the status of order 1001?')).text).toMatch(/shipped/);
    const { writes } = watched;
    const customer = writes.find((x) => x.roles.includes('user'));
    const reply = writes.find((x) => x.roles.includes('assistant'));
    expect(customer, JSON.stringify(writes)).toBeDefined();
    expect(reply, JSON.stringify(writes)).toBeDefined();
    // Read right after each commit: the customer's message waits for a reply, then the reply answered it.
    expect(customer!.outcome).toMatchObject({ status: 'open', waiting: 'reply' });
    expect(reply!.outcome).toMatchObject({ status: 'open' });
    expect(reply!.outcome!.waiting).toBeUndefined();
    expect(reply!.outcome!.lastAt).toBeGreaterThan(customer!.outcome!.lastAt);
    // The tool call was written too, by writes that carried no outcome fact: nothing of their own to write.
    const toolWrites = writes.filter(toolOnly);
    expect(toolWrites.length, JSON.stringify(writes)).toBeGreaterThanOrEqual(1);
    expect(toolWrites.every((x) => x.alone)).toBe(true);
    expect(customer!.alone || reply!.alone).toBe(false);
    // Each at the version the last one left, the plain ones (PostgreSQL's one statement) as the others.
    const versions = writes.map((x) => x.version);
    expect(
      versions.every((v) => v !== undefined),
      JSON.stringify(versions),
    ).toBe(true);
    for (let i = 1; i < versions.length; i++) expect(versions[i]).toBe(versions[i - 1]! + 1);
    // The outcome had no commit of its own: the turn's only commits were the conversation's writes.
    expect(watched.transactions()).toBe(0);
    expect(await store.outcomes.get(CONVERSATION)).toEqual(reply!.outcome);
  }, 120_000);

  it('a failing outcome write fails the conversation write with it; the write tried again folds its facts once', async () => {
    const { p, w } = await setup();
    const store = p.services.store;
    const events: TelemetryEvent[] = [];
    const stop = p.services.telemetry.subscribe({ event: (e) => void (e.type === 'conversation.outcome' && events.push(e)) });
    open.push({ close: stop });
    expect((await ask(w, 'm1', 'what is the status of order 1001?')).text).toMatch(/shipped/);
    const before = await store.outcomes.get(CONVERSATION);
    expect(before).toMatchObject({ status: 'open' });

    // The outcome's write fails once, as the write of "thanks" is committed: the whole write with it. The widget is
    // told; the write loop tries again, and the turn goes on.
    const failures = failOutcomePuts(store, 1);
    w.send({ type: 'message', id: 'm2', text: 'thanks, that solved it' });
    expect(await w.next((f) => f.type === 'error' && f.id === 'm2', SLOW)).toMatchObject({ code: 'unavailable' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', SLOW);
    expect(failures()).toBe(1);
    // The widget sends it again, as it was told to: the store has it already, and writes it (and folds it) no more.
    w.send({ type: 'message', id: 'm2', text: 'thanks, that solved it' });
    await w.next((f) => f.type === 'ack' && f.id === 'm2', SLOW);
    // Stored once (the failed write left nothing), and folded once: resolved, not resolved and then reopened.
    expect((await historyOf(store, CONVERSATION)).filter((r) => r.role === 'user').map((r) => r.id)).toEqual(['m1', 'm2']);
    const after = await store.outcomes.get(CONVERSATION);
    expect(after).toMatchObject({ status: 'resolved_confirmed', answered: 'yes', reopens: 0, startedAt: before!.startedAt });
    await until(
      async () => events.map((e) => e.data.outcome),
      (o) => o.length >= 1,
      SLOW,
    );
    await ask(w, 'm3', 'what is the status of order 1002?');
    // Its change reported once, after the commit; the next message (within reopen_days) reopens it, once.
    expect(events.map((e) => e.data.outcome)).toEqual(['resolved_confirmed', 'reopened']);
    expect(await store.outcomes.get(CONVERSATION)).toMatchObject({ status: 'open', reopens: 1 });
  }, 120_000);

  it('a write the store answers `seen` folds nothing; the write tried without that message folds only what it stores', async () => {
    const { p, w } = await setup();
    const store = p.services.store;
    expect((await ask(w, 'm1', 'what is the status of order 1001?')).text).toMatch(/shipped/);
    // "thanks" is stored already (another writer's, the host's own check not seeing it yet): the store is the
    // authority, and the actor's write of it is answered `seen`, then written again without it.
    const at = Date.now();
    await store.transaction((tx) => tx.history.append({ id: 'm2', conversationId: CONVERSATION, role: 'user', text: 'thanks, that solved it', at }));
    const seen = store.history.seen.bind(store.history);
    store.history.seen = async (id, messageId) => messageId !== 'm2' && (await seen(id, messageId));
    const writes = watchWrites(store).writes;
    w.send({ type: 'message', id: 'm2', text: 'thanks, that solved it' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant', SLOW);
    await until(
      async () => writes.length,
      (n) => n >= 1,
      SLOW,
    );
    // Its fact was not folded by this node's writes (the one answered `seen` wrote nothing, the next did not carry it).
    expect(
      writes.every((x) => !x.roles.includes('user')),
      JSON.stringify(writes),
    ).toBe(true);
    expect(await store.outcomes.get(CONVERSATION)).toMatchObject({ status: 'open', reopens: 0 });
    expect((await historyOf(store, CONVERSATION)).filter((r) => r.role === 'user').map((r) => r.id)).toEqual(['m1', 'm2']);
  }, 120_000);
});
