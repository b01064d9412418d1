// src/conversations/in-doubt-writes.ts on a real LMDB store and a manual clock: a stopped actor's write that failed
// unseen is published only if its own records (same id, same time) are in the history, and only once.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createInDoubtWrites } from '../../src/conversations/in-doubt-writes.ts';
import type { ConversationMeta, Pending } from '../../src/conversations/host.ts';
import { createLogger } from '../../src/logger.ts';
import type { MessageRecord } from '../../src/store/model.ts';
import { openTestStore, type TestStore } from '../support/store.ts';

const meta: ConversationMeta = { conversationId: 'conv_web_c1', customerId: 'c1', channel: 'web' };
const reply = (at: number): Pending => ({ o: { type: 'reply', id: 'm1:r', text: 'hi', turnId: 't1' } as Pending['o'], at });
const record = (at: number): MessageRecord => ({ id: 'm1:r', conversationId: meta.conversationId, role: 'assistant', text: 'hi', at, turnId: 't1' });
const flush = () => new Promise((r) => setTimeout(r, 20));

let store: TestStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function setUp(stored?: MessageRecord) {
  store = await openTestStore();
  if (stored) await store.transaction((tx) => tx.history.append(stored));
  const clock = createManualClock(1000);
  const published: Pending[][] = [];
  const history = store.history;
  let failing = false;
  const doubts = createInDoubtWrites({
    history: { recent: (id, limit) => (failing ? Promise.reject(new Error('the store does not answer')) : history.recent(id, limit)) },
    clock,
    logger: createLogger('silent'),
    publish: (_meta, entries) => published.push(entries),
    retryMs: 5000,
  });
  return { clock, published, doubts, setFailing: (f: boolean) => (failing = f) };
}

describe('in-doubt writes', () => {
  it('a write that did commit (its record has the same id and time) is published once, even when two checks overlap', async () => {
    const { clock, published, doubts } = await setUp(record(500));
    doubts.note(meta, [reply(500)]);
    clock.advance(1000); // the first check starts reading
    doubts.recovered();
    clock.advance(0); // a second starts while the first reads
    await flush();
    expect(published).toEqual([[reply(500)]]);
  });

  it('a write that did not commit is not published, also when another node redid the turn under the same ids at its own time', async () => {
    const redone = await setUp(record(900));
    redone.doubts.note(meta, [reply(500)]);
    redone.clock.advance(1000);
    await flush();
    expect(redone.published).toEqual([]);
    await store!.close();
    const none = await setUp();
    none.doubts.note(meta, [reply(500)]);
    none.clock.advance(1000);
    await flush();
    expect(none.published).toEqual([]);
  });

  it('while the store does not answer, it looks again every retryMs', async () => {
    const { clock, published, doubts, setFailing } = await setUp(record(500));
    setFailing(true);
    doubts.note(meta, [reply(500)]);
    clock.advance(1000);
    await flush();
    expect(published).toEqual([]);
    setFailing(false);
    clock.advance(4999);
    await flush();
    expect(published).toEqual([]);
    clock.advance(1);
    await flush();
    expect(published).toEqual([[reply(500)]]);
  });
});
