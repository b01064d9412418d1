// src/conversations/in-doubt-writes.ts on every engine of engines.ts, with a manual clock: a stopped actor's write that
// failed unseen is published only if its own records (same id, same time) are in the history, only once, and only
// once nothing that held the conversation can still commit (a COMMIT a hung PostgreSQL carries out after it resumes).
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createInDoubtWrites, lookAfterWrites } from '../../src/conversations/in-doubt-writes.ts';
import type { ConversationMeta, Pending } from '../../src/conversations/host.ts';
import { createLogger } from '../../src/logger.ts';
import type { MessageRecord } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import { engines } from './engines.ts';

const meta: ConversationMeta = { conversationId: 'conv_web_c1', customerId: 'c1', channel: 'web' };
const reply = (at: number): Pending => ({ o: { type: 'reply', id: 'm1:r', text: 'hi', turnId: 't1' } as Pending['o'], at });
const record = (at: number): MessageRecord => ({ id: 'm1:r', conversationId: meta.conversationId, role: 'assistant', text: 'hi', at, turnId: 't1' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const flush = () => sleep(20);
const DEADLINE = 15_000;

for (const engine of engines) {
  describe(`in-doubt writes (${engine.name})`, () => {
    const open: Store[] = [];
    afterEach(async () => {
      for (const s of open.splice(0).reverse()) await s.close();
    });

    async function setUp(stored?: MessageRecord) {
      const store = await engine.open();
      open.push(store);
      if (stored) await store.transaction((tx) => tx.history.append(stored));
      const clock = createManualClock(1000);
      const published: Pending[][] = [];
      const look = lookAfterWrites(store);
      let failing = false;
      const looks = { done: 0 };
      const doubts = createInDoubtWrites({
        history: async (id, limit) => {
          if (failing) throw new Error('the store does not answer');
          const found = await look(id, limit);
          looks.done++;
          return found;
        },
        clock,
        logger: createLogger('silent'),
        publish: (_meta, entries) => published.push(entries),
        retryMs: 5000,
      });
      /** Until `n` looks have read the history (on a busy machine a PostgreSQL read may take long), and what follows them. */
      const looked = async (n: number) => {
        await expect.poll(() => looks.done, { timeout: DEADLINE }).toBeGreaterThanOrEqual(n);
        await flush();
      };
      return { store, clock, published, doubts, looked, setFailing: (f: boolean) => (failing = f) };
    }

    it('a write that did commit (its record has the same id and time) is published once, even when two checks overlap', async () => {
      const { clock, published, doubts, looked } = await setUp(record(500));
      // What its transaction prepared to run once committed (the outcome's events) runs once too, after the publish.
      const ran: number[] = [];
      doubts.note(meta, [reply(500)], [() => ran.push(published.length)]);
      clock.advance(1000); // the first check starts reading
      doubts.recovered();
      clock.advance(0); // a second starts while the first reads
      await looked(1);
      await sleep(200); // a second publish would show now
      expect(published).toEqual([[reply(500)]]);
      expect(ran).toEqual([1]);
    });

    it('a write that did not commit is not published, also when another node redid the turn under the same ids at its own time', async () => {
      const redone = await setUp(record(900));
      let ran = 0;
      redone.doubts.note(meta, [reply(500)], [() => ran++]);
      redone.clock.advance(1000);
      await redone.looked(1);
      expect(redone.published).toEqual([]);
      expect(ran).toBe(0);
      const none = await setUp();
      none.doubts.note(meta, [reply(500)]);
      none.clock.advance(1000);
      await none.looked(1);
      expect(none.published).toEqual([]);
    });

    it('while the store does not answer, it looks again every retryMs', async () => {
      const { clock, published, doubts, looked, setFailing } = await setUp(record(500));
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
      await looked(1);
      expect(published).toEqual([[reply(500)]]);
    });

    it('a write that holds the conversation when the look starts and commits after it is found and published', async () => {
      const { store, clock, published, doubts, looked } = await setUp();
      // The write's COMMIT is on its way (on PostgreSQL: in the socket of a backend that was stopped); another
      // process's connection, as a zombie backend is no connection of this pool.
      const other = await engine.sibling(store);
      if (other !== store) open.push(other);
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => (commit = resolve));
      let locked!: () => void;
      const holding = new Promise<void>((resolve) => (locked = resolve));
      const write = other.transaction(async (tx) => {
        await tx.conversations.lockFields(meta.conversationId);
        await tx.history.append(record(500));
        locked();
        await committing;
      });
      await holding;
      doubts.note(meta, [reply(500)]);
      clock.advance(1000);
      await sleep(300);
      expect(published, 'nothing is concluded while the write may still commit').toEqual([]);
      commit();
      await write;
      await looked(1);
      expect(published).toEqual([[reply(500)]]);
    });
  });
}
