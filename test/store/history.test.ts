// Contract: HistoryStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { MessageRecord, MessageRole } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

const message = (conversationId: string, n: number, role: MessageRole = 'user', extra: Partial<MessageRecord> = {}): MessageRecord =>
  Object.assign({ id: `m${n}`, conversationId, role, text: `text ${n}`, at: 1000 + n }, extra);

export function describeHistoryContract(engine: string, open: () => Promise<Store>, sibling: (first: Store) => Promise<Store>) {
  describe(`${engine}: history`, () => {
    const store = freshStore(open);

    /** Appends in one transaction that locked the conversation, as the conversation host does. */
    const append = (...records: MessageRecord[]) =>
      store().transaction(async (tx) => {
        const seqs: number[] = [];
        for (const r of records) {
          await tx.conversations.lock(r.conversationId);
          seqs.push(await tx.history.append(r));
        }
        return seqs;
      });

    it('numbers records 1, 2, 3 … per conversation', async () => {
      expect(await append(message('a', 1), message('a', 2))).toEqual([1, 2]);
      expect(await append(message('b', 1))).toEqual([1]);
      expect(await append(message('a', 3))).toEqual([3]);
      expect(await store().history.append(message('b', 2))).toBe(2);
    });

    it('records come back whole, every optional field included', async () => {
      const tool = message('a', 1, 'tool', { turnId: 't1', data: { phase: 'result', name: 'lookup', ok: true, args: { q: [1, 'x'] } } });
      const proactive = message('a', 2, 'assistant', { proactive: true, turnId: 't2' });
      const plain = message('a', 3, 'confirmation', { text: '' });
      await append(tool, proactive, plain);
      expect(await store().history.recent('a', 10)).toEqual([tool, proactive, plain]);
    });

    it('recent: the last records oldest first, only the given roles when asked', async () => {
      await append(message('a', 1, 'user'), message('a', 2, 'assistant'), message('a', 3, 'tool'), message('a', 4, 'user'), message('a', 5, 'assistant'));
      await append(message('b', 9, 'user'));
      expect((await store().history.recent('a', 3)).map((r) => r.id)).toEqual(['m3', 'm4', 'm5']);
      expect((await store().history.recent('a', 3, ['user', 'assistant'])).map((r) => r.id)).toEqual(['m2', 'm4', 'm5']);
      expect((await store().history.recent('a', 100, ['tool'])).map((r) => r.id)).toEqual(['m3']);
      expect((await store().history.recent('a', Number.MAX_SAFE_INTEGER)).map((r) => r.id)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
      expect(await store().history.recent('nobody', 5)).toEqual([]);
    });

    it('since: the records after a sequence number, with their numbers', async () => {
      await append(message('a', 1), message('a', 2), message('a', 3));
      await append(message('b', 1));
      expect(await store().history.since('a', 1)).toEqual([
        { seq: 2, record: message('a', 2) },
        { seq: 3, record: message('a', 3) },
      ]);
      expect(await store().history.since('a', 0)).toHaveLength(3);
      expect(await store().history.since('a', 3)).toEqual([]);
    });

    it('page: up to `limit` records before `before` (the newest without it), oldest first', async () => {
      await append(...[1, 2, 3, 4, 5].map((n) => message('a', n)));
      expect((await store().history.page('a', { limit: 2 })).map((p) => p.seq)).toEqual([4, 5]);
      expect((await store().history.page('a', { before: 4, limit: 2 })).map((p) => p.seq)).toEqual([2, 3]);
      expect((await store().history.page('a', { before: 2, limit: 5 })).map((p) => p.seq)).toEqual([1]);
      expect(await store().history.page('a', { before: 1, limit: 5 })).toEqual([]);
      expect((await store().history.page('a', { before: 3, limit: 5 }))[0]).toEqual({ seq: 1, record: message('a', 1) });
    });

    it("seen: a customer message's id, in its own conversation only", async () => {
      expect(await store().history.seen('a', 'm1')).toBe(false);
      await append(message('a', 1, 'user'), message('a', 2, 'assistant'));
      expect(await store().history.seen('a', 'm1')).toBe(true);
      expect(await store().history.seen('a', 'm2')).toBe(false); // not a customer message
      expect(await store().history.seen('b', 'm1')).toBe(false);
    });

    /** Moves in one transaction that locked both conversations, as a visitor's sign-in does. */
    const move = (from: string, into: string, on: Store = store()) =>
      on.transaction(async (tx) => {
        await tx.conversations.lock(from);
        await tx.conversations.lock(into);
        return tx.history.move(from, into);
      });

    it('move: every record of one conversation goes, in order, after the end of another; a second move moves nothing', async () => {
      await append(message('into', 1, 'user'), message('into', 2, 'assistant'));
      const tool = message('from', 4, 'tool', { turnId: 't1', data: { phase: 'result', name: 'lookup', ok: true } });
      await append(message('from', 3, 'user'), tool, message('from', 5, 'assistant', { proactive: true }));
      await append(message('other', 6, 'user'));
      expect(await move('from', 'into')).toBe(3);
      const moved = (r: MessageRecord) => Object.assign({}, r, { conversationId: 'into' });
      expect(await store().history.since('into', 0)).toEqual([
        { seq: 1, record: message('into', 1, 'user') },
        { seq: 2, record: message('into', 2, 'assistant') },
        { seq: 3, record: moved(message('from', 3, 'user')) },
        { seq: 4, record: moved(tool) },
        { seq: 5, record: moved(message('from', 5, 'assistant', { proactive: true })) },
      ]);
      expect(await store().history.recent('from', 10)).toEqual([]);
      expect(await store().history.lastSeq('from')).toBe(0);
      expect(await store().history.lastSeq('into')).toBe(5);
      // `seen` follows the customer's message; another conversation is untouched.
      expect(await store().history.seen('into', 'm3')).toBe(true);
      expect(await store().history.seen('from', 'm3')).toBe(false);
      expect((await store().history.recent('other', 10)).map((r) => r.id)).toEqual(['m6']);
      // Idempotent: nothing is left to move; the next record of `into` follows the moved ones.
      expect(await move('from', 'into')).toBe(0);
      expect(await append(message('into', 7, 'user'))).toEqual([6]);
      expect(await append(message('from', 8, 'user'))).toEqual([1]);
    });

    it('move: two concurrent moves of one conversation move each record once', async () => {
      await warmUp(store());
      await append(...[1, 2, 3, 4].map((n) => message('from', n)));
      const counts = await concurrently(2, () => move('from', 'into'));
      expect(counts.sort()).toEqual([0, 4]);
      expect((await store().history.since('into', 0)).map((p) => p.record.id)).toEqual(['m1', 'm2', 'm3', 'm4']);
    });

    it('move: two nodes (two stores of one database; one store for LMDB) moving one conversation at once move each record once', async () => {
      const other = await sibling(store());
      try {
        await warmUp(store());
        await append(...[1, 2, 3, 4, 5].map((n) => message('from', n)));
        const counts = await concurrently(6, (i) => move('from', 'into', i % 2 ? other : store()));
        expect(counts.sort()).toEqual([0, 0, 0, 0, 0, 5]);
        expect((await other.history.since('into', 0)).map((p) => p.record.id)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
      } finally {
        if (other !== store()) await other.close();
      }
    });

    it('concurrent appends to one conversation under its lock get distinct numbers 1 … 20', async () => {
      await warmUp(store());
      const seqs = await concurrently(20, (i) => append(message('a', i)));
      expect(seqs.flat().sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect((await store().history.since('a', 0)).map((p) => p.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });
  });
}

for (const e of engines) describeHistoryContract(e.name, e.open, e.sibling);
