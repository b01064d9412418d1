// `conversation.defer_read_call_records` (src/conversations/quiet-outputs.ts, issue 31 part 6), on the run's engine,
// through a real widget and a real SDK backend with the offline model:
// - on: a turn with a read call commits twice, the customer's message, then the call's records with the reply;
// - on: a slow call's start is not held back longer than QUIET_OUTPUT_WAIT_MS: it is written on its own while the call
//   still runs, and its result goes with the reply;
// - off (the default): each of the call's records gets its own commit at once;
// - on: the host settling (as it does when it stops) writes what waits at once, not when its time comes;
// - the history keeps every record, in the order things happened.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock, type Clock } from '../../src/clock.ts';
import { QUIET_OUTPUT_WAIT_MS } from '../../src/conversations/quiet-outputs.ts';
import type { Store } from '../../src/store/repos.ts';
import { functionRegistered } from '../support/demo-backend.ts';
import { orderBackend } from '../support/order-backend.ts';
import { startParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { until } from '../support/whatsapp.ts';
import { askAndAwaitReply, startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** The machine running the tests is shared and loaded: a turn may take seconds. */
const SLOW = 30_000;

/** The roles each committed conversation write stored, and when it committed, from now on. */
function watchWrites(store: Store): { roles: string[]; at: number }[] {
  const writes: { roles: string[]; at: number }[] = [];
  const persist = store.conversations.persist.bind(store.conversations);
  store.conversations.persist = async (record, messages, expected, channelWrites) => {
    const result = await persist(record, messages, expected, channelWrites);
    if ('version' in result) writes.push({ roles: messages.map((m) => m.role), at: Date.now() });
    return result;
  };
  return writes;
}

/**
 * Parley with a backend whose read function `getOrderStatus` answers "shipped" once `answered` resolves, and a
 * signed-in widget. `defer`: conversation.defer_read_call_records; `clock`: the server's (default: real time).
 */
async function setup(customerId: string, answered: () => Promise<void>, defer = true, clock?: Clock) {
  const p = await startParley({ clock, config: { logging: { level: 'warn' }, conversation: { defer_read_call_records: defer } } });
  open.push(p);
  const handler = async (a: { orderId: string }) => (await answered(), { orderId: a.orderId, status: 'shipped' });
  open.push({ close: await orderBackend([p.url()], 'getOrderStatus', { handler }) });
  await functionRegistered(p, 'getOrderStatus', SLOW);
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return { p, w };
}

const ask = (w: WidgetClient, id: string, text: string) => askAndAwaitReply(w, id, text, SLOW);

/** A function that takes 200 ms: long enough for a write asked for at its start to be on its own. */
const takes200Ms = () => new Promise<void>((r) => setTimeout(r, 200));

describe("a read call's records and the turn's writes", () => {
  it("deferred: two commits, the customer's message, then the call's records with the reply; the history keeps all, in order", async () => {
    const { p, w } = await setup('quiet-1', takes200Ms);
    const store = p.services.store;
    await ask(w, 'm1', 'hello'); // activates the conversation: its first writes are not what is measured
    const writes = watchWrites(store);
    expect((await ask(w, 'm2', 'what is the status of order 1001?')).text).toMatch(/shipped/);
    expect(writes.map((x) => x.roles)).toEqual([['user'], ['tool', 'tool', 'assistant']]);
    const turn = (await historyOf(store, 'conv_web_quiet-1')).filter((r) => r.turnId === 'conv_web_quiet-1:m2');
    expect(turn.map((r) => [r.role, r.data?.phase])).toEqual([
      ['user', undefined],
      ['tool', 'invoked'],
      ['tool', 'result'],
      ['assistant', undefined],
    ]);
    expect(turn.map((r) => r.at)).toEqual([...turn.map((r) => r.at)].sort((a, b) => a - b));
  }, 120_000);

  it(`deferred, a slow read call: its start is written on its own within about ${QUIET_OUTPUT_WAIT_MS} ms while it runs; its result goes with the reply`, async () => {
    let writes: { roles: string[]; at: number }[] = [];
    // The function answers once its start was written on its own (the deferred write's time came).
    const startWritten = () => writes.some((x) => x.roles.join() === 'tool');
    const { p, w } = await setup('quiet-2', () => until(async () => startWritten(), Boolean, SLOW).then(() => undefined));
    await ask(w, 'm1', 'hello');
    writes = watchWrites(p.services.store);
    const askedAt = Date.now();
    expect((await ask(w, 'm2', 'what is the status of order 1001?')).text).toMatch(/shipped/);
    expect(writes.map((x) => x.roles)).toEqual([['user'], ['tool'], ['tool', 'assistant']]);
    // Not before its time (a loaded machine may make it later, never sooner).
    expect(writes[1].at - askedAt).toBeGreaterThanOrEqual(QUIET_OUTPUT_WAIT_MS);
  }, 120_000);

  it("not deferred (the default): the call's start, its result and the reply each get a commit at once", async () => {
    const { p, w } = await setup('quiet-3', takes200Ms, false);
    await ask(w, 'm1', 'hello');
    const writes = watchWrites(p.services.store);
    expect((await ask(w, 'm2', 'what is the status of order 1001?')).text).toMatch(/shipped/);
    expect(writes.map((x) => x.roles)).toEqual([['user'], ['tool'], ['tool'], ['assistant']]);
  }, 120_000);

  it('deferred: the host settling writes what waits at once (its timer, on a clock that does not move, never fires)', async () => {
    let called!: () => void;
    const calledOnce = new Promise<void>((r) => (called = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const clock = createManualClock(Date.parse('2026-11-27T12:00:00Z'));
    // Called by m2 only ("hello" calls nothing): it answers once the check below is done.
    const answered = async () => {
      called();
      await released;
    };
    const { p, w } = await setup('quiet-4', answered, true, clock);
    await ask(w, 'm1', 'hello');
    const store = p.services.store;
    const writes = watchWrites(store);
    w.send({ type: 'message', id: 'm2', text: 'what is the status of order 1001?' });
    await calledOnce;
    await p.runtime.host.settle();
    expect(writes.map((x) => x.roles)).toEqual([['user'], ['tool']]);
    const turn = (await historyOf(store, 'conv_web_quiet-4')).filter((r) => r.turnId === 'conv_web_quiet-4:m2');
    expect(turn.map((r) => [r.role, r.data?.phase])).toEqual([
      ['user', undefined],
      ['tool', 'invoked'],
    ]);
    release();
    expect((await w.next((f) => f.type === 'message' && f.role === 'assistant', SLOW)).text).toMatch(/shipped/);
  }, 120_000);
});
