// Contract: ConversationStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { ConversationRecord, MessageRecord } from '../../src/store/model.ts';
import { isOwnershipLost } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

function conversation(id: string, fields: Partial<ConversationRecord> = {}): ConversationRecord {
  return Object.assign(
    {
      conversationId: id,
      customerId: `cus_${id}`,
      channel: 'web' as const,
      snapshot: { value: 'idle', context: { id } },
      state: 'idle',
      busy: false,
      updatedAt: 100,
    },
    fields,
  );
}

const summaryOf = (c: ConversationRecord) => {
  const { snapshot: _, ...rest } = c;
  return rest;
};

export function describeConversationsContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: conversations`, () => {
    const store = freshStore(open);

    it('a record comes back whole, every optional field included; an unknown id is undefined', async () => {
      expect(await store().conversations.get('c1')).toBeUndefined();
      const full = conversation('c1', {
        externalId: 'ext-1',
        channel: 'whatsapp',
        snapshot: { status: 'active', value: { turn: 'thinking' }, context: { messages: ['a', 'b'], n: 1.5, nested: { ok: true, none: null } } },
        state: '{"turn":"thinking"}',
        busy: true,
        updatedAt: 500,
        lastMessageAt: 400,
        lastCustomerMessageAt: 300,
        pendingConfirmation: { id: 'cf1', name: 'refund', args: { amount: 5 }, summary: 'Refund 5?' },
        reviewedAt: 200,
        reflection: { verdict: 'unresolved', summary: 'waiting', at: 200 },
        followupPending: { content: 'Any news?', decidedAt: 250, attempts: 1 },
        reviewAttempt: { lastMessageAt: 400, attempts: 2, at: 450 },
        handoff: { since: 420, source: 'model', reason: 'asked for a person', agent: { name: 'Alex' } },
      });
      await store().conversations.put(full);
      expect(await store().conversations.get('c1')).toEqual(full);
    });

    it('put replaces the record: fields the new one lacks are gone', async () => {
      await store().conversations.put(
        conversation('c1', { reviewedAt: 5, pendingConfirmation: { id: 'x', name: 'n', args: null, summary: 's' }, lastMessageAt: 4 }),
      );
      const next = conversation('c1', { state: 'closed', updatedAt: 900, snapshot: { value: 'closed' } });
      await store().conversations.put(next);
      expect(await store().conversations.get('c1')).toEqual(next);
    });

    it('busy lists the conversations that were mid-turn, as they are now', async () => {
      await store().conversations.put(conversation('a', { busy: true, externalId: 'ext-a' }));
      await store().conversations.put(conversation('b'));
      await store().conversations.put(conversation('c', { busy: true, channel: 'whatsapp' }));
      const busy = await store().conversations.busy();
      expect(busy.sort((x, y) => x.conversationId.localeCompare(y.conversationId))).toEqual([
        { conversationId: 'a', customerId: 'cus_a', externalId: 'ext-a', channel: 'web' },
        { conversationId: 'c', customerId: 'cus_c', channel: 'whatsapp' },
      ]);
      await store().conversations.put(conversation('a'));
      expect((await store().conversations.busy()).map((m) => m.conversationId)).toEqual(['c']);
    });

    it('dueForReview: last message at or before the cutoff and no verdict since, oldest first, limited, following put', async () => {
      await store().conversations.put(conversation('late', { lastMessageAt: 300 }));
      await store().conversations.put(conversation('early', { lastMessageAt: 100 }));
      await store().conversations.put(conversation('mid', { lastMessageAt: 200, reviewedAt: 150 })); // reviewed before its last message
      await store().conversations.put(conversation('reviewed', { lastMessageAt: 150, reviewedAt: 150 }));
      await store().conversations.put(conversation('silent')); // no message at all
      await store().conversations.put(conversation('future', { lastMessageAt: 301 }));
      expect(await store().conversations.dueForReview(300, 10)).toEqual([
        { conversationId: 'early', lastMessageAt: 100 },
        { conversationId: 'mid', lastMessageAt: 200 },
        { conversationId: 'late', lastMessageAt: 300 },
      ]);
      expect((await store().conversations.dueForReview(300, 2)).map((c) => c.conversationId)).toEqual(['early', 'mid']);
      // A verdict takes it off the list; a new customer message (reviewedAt cleared) puts it back.
      await store().conversations.put(conversation('early', { lastMessageAt: 100, reviewedAt: 120 }));
      expect((await store().conversations.dueForReview(300, 10)).map((c) => c.conversationId)).toEqual(['mid', 'late']);
      await store().conversations.put(conversation('early', { lastMessageAt: 250 }));
      expect((await store().conversations.dueForReview(300, 10)).map((c) => c.conversationId)).toEqual(['mid', 'early', 'late']);
    });

    it('withPendingFollowup follows put', async () => {
      await store().conversations.put(conversation('a', { followupPending: { content: 'hi', decidedAt: 1 } }));
      await store().conversations.put(conversation('b'));
      await store().conversations.put(conversation('c', { followupPending: { content: 'hey', decidedAt: 2 } }));
      expect((await store().conversations.withPendingFollowup(10)).sort()).toEqual(['a', 'c']);
      expect(await store().conversations.withPendingFollowup(1)).toHaveLength(1);
      await store().conversations.put(conversation('a'));
      expect(await store().conversations.withPendingFollowup(10)).toEqual(['c']);
    });

    it('summaries: the given ids without snapshots, or the most recently active', async () => {
      const a = conversation('a', { lastMessageAt: 500, reflection: { verdict: 'resolved', summary: 'done', at: 600 } });
      const b = conversation('b', { updatedAt: 700 }); // no message: its update time counts
      const c = conversation('c', { lastMessageAt: 300, updatedAt: 900 });
      for (const x of [a, b, c]) await store().conversations.put(x);
      const some = await store().conversations.summaries({ ids: ['c', 'nobody', 'a'], limit: 10 });
      expect(some.sort((x, y) => x.conversationId.localeCompare(y.conversationId))).toEqual([summaryOf(a), summaryOf(c)]);
      expect(some.every((s) => !('snapshot' in s))).toBe(true);
      expect(await store().conversations.summaries({ limit: 10 })).toEqual([summaryOf(b), summaryOf(a), summaryOf(c)]);
      expect((await store().conversations.summaries({ limit: 2 })).map((s) => s.conversationId)).toEqual(['b', 'a']);
    });

    it('lock returns the record inside a transaction, undefined before it exists', async () => {
      await store().conversations.put(conversation('c1'));
      const [locked, missing] = await store().transaction(async (tx) => [await tx.conversations.lock('c1'), await tx.conversations.lock('c2')]);
      expect(locked).toEqual(conversation('c1'));
      expect(missing).toBeUndefined();
    });

    it('lockFields returns the locked record without its snapshot; 30 concurrent lockFields-then-save append 30 numbered records', async () => {
      await store().conversations.put(conversation('c1', { externalId: 'e1', lastMessageAt: 7 }));
      const [locked, missing] = await store().transaction(async (tx) => [await tx.conversations.lockFields('c1'), await tx.conversations.lockFields('c2')]);
      expect(locked).toEqual(summaryOf(conversation('c1', { externalId: 'e1', lastMessageAt: 7 })));
      expect(missing).toBeUndefined();
      await warmUp(store());
      await concurrently(30, (i) =>
        store().transaction(async (tx) => {
          const previous = await tx.conversations.lockFields('s');
          const n = (previous?.lastMessageAt ?? 0) + 1;
          await tx.conversations.save(conversation('s', { lastMessageAt: n, snapshot: { n } }), [
            { id: `m${i}`, conversationId: 's', role: 'user', text: `hi ${i}`, at: n, turnId: `t${i}` },
          ]);
        }),
      );
      expect(await store().conversations.get('s')).toMatchObject({ lastMessageAt: 30, snapshot: { n: 30 } });
      const page = await store().history.page('s', { limit: 100 });
      expect(page.map((r) => r.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(page.map((r) => r.record.at)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    });

    it('save writes the record and appends its records in order after the last one, every field kept; none is fine', async () => {
      await store().transaction(async (tx) => {
        await tx.conversations.lockFields('c1');
        await tx.history.append({ id: 'first', conversationId: 'c1', role: 'assistant', text: 'earlier', at: 1 });
      });
      const records = [
        { id: 'u1', conversationId: 'c1', role: 'user' as const, text: 'hello\u0000there', at: 2, turnId: 't1', data: { content: [{ type: 'text' }] } },
        { id: 'call:invoked', conversationId: 'c1', role: 'tool' as const, text: '', at: 3, turnId: 't1', data: { phase: 'invoked', args: { a: [1, null] } } },
        { id: 'p1', conversationId: 'c1', role: 'assistant' as const, text: 'offer', at: 4, proactive: true },
      ];
      await store().transaction(async (tx) => {
        await tx.conversations.lockFields('c1');
        await tx.conversations.save(conversation('c1', { busy: true, state: 'thinking', lastMessageAt: 4 }), records);
      });
      expect(await store().conversations.get('c1')).toEqual(conversation('c1', { busy: true, state: 'thinking', lastMessageAt: 4 }));
      const page = await store().history.page('c1', { limit: 10 });
      expect(page.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
      const stored = page.slice(1).map((r) => r.record);
      // PostgreSQL's text cannot hold U+0000 (db.ts `text`): U+FFFD stands for it there.
      expect(stored[0].text.replace('\uFFFD', '\u0000')).toBe('hello\u0000there');
      expect(stored.map((r) => Object.assign({}, r, { text: r.text.replace('\uFFFD', '\u0000') }))).toEqual(records);
      expect(await store().history.seen('c1', 'u1')).toBe(true);
      await store().transaction(async (tx) => tx.conversations.save(conversation('c1', { state: 'idle' }), []));
      expect((await store().conversations.get('c1'))?.state).toBe('idle');
      expect(await store().history.lastSeq('c1')).toBe(4);
    });

    it('withHuman: the conversations a person has, most recently handed over first, paged, following put', async () => {
      const handed = (id: string, since: number) => conversation(id, { state: 'withHuman', busy: true, handoff: { since, source: 'api' } });
      await store().conversations.put(handed('a', 100));
      await store().conversations.put(handed('b', 300));
      await store().conversations.put(handed('c', 200));
      await store().conversations.put(handed('d', 200));
      await store().conversations.put(conversation('e'));
      const ids = async (o: Parameters<Store['conversations']['withHuman']>[0]) => (await store().conversations.withHuman(o)).map((c) => c.conversationId);
      expect(await ids({ limit: 10 })).toEqual(['b', 'd', 'c', 'a']);
      expect(await ids({ limit: 2 })).toEqual(['b', 'd']);
      expect(await ids({ limit: 2, before: { since: 200, conversationId: 'd' } })).toEqual(['c', 'a']);
      expect(await ids({ limit: 0 })).toEqual([]);
      const [first] = await store().conversations.withHuman({ limit: 1 });
      expect(first).toEqual(summaryOf(handed('b', 300)));
      // Released, and handed over again later: it moves; released for good: it leaves the list.
      await store().conversations.put(conversation('b'));
      await store().conversations.put(handed('a', 400));
      expect(await ids({ limit: 10 })).toEqual(['a', 'd', 'c']);
    });

    const message = (conversationId: string, id: string, role: MessageRecord['role'] = 'assistant'): MessageRecord => ({
      id,
      conversationId,
      role,
      text: `text of ${id}`,
      at: 100,
    });
    const historyIds = async (id: string) => (await store().history.since(id, 0)).map(({ seq, record }) => `${seq}:${record.id}`);

    it('every write moves the version on; saveIfUnchanged writes only at the version last written, after any append', async () => {
      const v1 = await store().transaction(async (tx) => {
        await tx.conversations.lockFields('c1');
        return tx.conversations.save(conversation('c1', { updatedAt: 1 }), [message('c1', 'm1', 'user')]);
      });
      // Another writer appends under the lock without touching the record (a proactive message): the version holds.
      await store().transaction(async (tx) => {
        await tx.conversations.lock('c1');
        await tx.history.append(message('c1', 'p1'));
      });
      const next = conversation('c1', { updatedAt: 2, lastMessageAt: 2, snapshot: { n: 2 } });
      const v2 = await store().conversations.saveIfUnchanged(next, [message('c1', 'r1'), message('c1', 'm2', 'user')], { version: v1 });
      expect(v2).toBeGreaterThan(v1);
      expect(await store().conversations.get('c1')).toEqual(next);
      expect(await historyIds('c1')).toEqual(['1:m1', '2:p1', '3:r1', '4:m2']);
      expect(await store().history.seen('c1', 'm2')).toBe(true);

      // At a version it no longer is: nothing written.
      const stale = conversation('c1', { updatedAt: 3 });
      expect(await store().conversations.saveIfUnchanged(stale, [message('c1', 'r2')], { version: v1 })).toBeUndefined();
      // Another writer's put moves it on too.
      const theirs = conversation('c1', { updatedAt: 4, reviewedAt: 4 });
      await store().conversations.put(theirs);
      expect(await store().conversations.saveIfUnchanged(stale, [message('c1', 'r2')], { version: v2! })).toBeUndefined();
      expect(await store().conversations.get('c1')).toEqual(theirs);
      expect(await historyIds('c1')).toEqual(['1:m1', '2:p1', '3:r1', '4:m2']);
      // Not written yet at all: no version to be at.
      expect(await store().conversations.saveIfUnchanged(conversation('c2'), [], { version: 1 })).toBeUndefined();
      expect(await store().conversations.get('c2')).toBeUndefined();
    });

    it('saveIfUnchanged refuses a customer message already stored (another role may repeat an id)', async () => {
      const v1 = await store().conversations.save(conversation('c1'), [message('c1', 'm1', 'user'), message('c1', 'call-1')]);
      const again = conversation('c1', { updatedAt: 7 });
      expect(await store().conversations.saveIfUnchanged(again, [message('c1', 'r1'), message('c1', 'm1', 'user')], { version: v1 })).toBeUndefined();
      expect(await historyIds('c1')).toEqual(['1:m1', '2:call-1']);
      expect(await store().conversations.saveIfUnchanged(again, [message('c1', 'call-1'), message('c1', 'm2', 'user')], { version: v1 })).toBeGreaterThan(v1);
      expect(await historyIds('c1')).toEqual(['1:m1', '2:call-1', '3:call-1', '4:m2']);
    });

    it('saveIfUnchanged with an owner writes only while that node holds the conversation at that epoch', async () => {
      expect(
        await store().nodes.join({ nodeId: 'node-a', instance: 'i-a', leaseMs: 10_000, load: { sdkConnections: 0, sdkFunctions: 0, conversations: 0 } }),
      ).toBe(true);
      const claim = await store().ownership.claim('c1', 'node-a');
      if (!claim.claimed) throw new Error('node-a could not claim c1');
      const v1 = await store().conversations.save(conversation('c1'), []);
      const owner = { nodeId: 'node-a', epoch: claim.epoch };
      expect(
        await store().conversations.saveIfUnchanged(conversation('c1'), [], { version: v1, owner: { nodeId: 'node-b', epoch: claim.epoch } }),
      ).toBeUndefined();
      expect(
        await store().conversations.saveIfUnchanged(conversation('c1'), [], { version: v1, owner: { nodeId: 'node-a', epoch: claim.epoch + 1 } }),
      ).toBeUndefined();
      const v2 = await store().conversations.saveIfUnchanged(conversation('c1', { updatedAt: 5 }), [message('c1', 'r1')], { version: v1, owner });
      expect(v2).toBeGreaterThan(v1);
      await store().ownership.release('c1', 'node-a', claim.epoch);
      expect(await store().conversations.saveIfUnchanged(conversation('c1', { updatedAt: 6 }), [], { version: v2!, owner })).toBeUndefined();
      expect((await store().conversations.get('c1'))?.updatedAt).toBe(5);
    });

    it('saveIfUnchanged waits for a writer that holds the lock, and then refuses: that writer moved the record on', async () => {
      const v1 = await store().conversations.save(conversation('c1'), []);
      let fast: Promise<number | undefined> | undefined;
      await store().transaction(async (tx) => {
        await tx.conversations.lockFields('c1');
        fast = store().conversations.saveIfUnchanged(conversation('c1', { updatedAt: 9 }), [message('c1', 'late')], { version: v1 });
        // Long enough for the statement to reach the lock on PostgreSQL; LMDB runs one write at a time anyway.
        await new Promise((r) => setTimeout(r, 100));
        await tx.conversations.put(conversation('c1', { updatedAt: 8, reviewedAt: 8 }));
      });
      expect(await fast).toBeUndefined();
      expect(await store().conversations.get('c1')).toMatchObject({ updatedAt: 8, reviewedAt: 8 });
      expect(await historyIds('c1')).toEqual([]);
    });

    it('20 concurrent saveIfUnchanged at the same version: exactly one writes', async () => {
      await warmUp(store());
      const v1 = await store().conversations.save(conversation('c1'), []);
      const outcomes = await concurrently(20, (i) =>
        store().conversations.saveIfUnchanged(conversation('c1', { updatedAt: i }), [message('c1', `r${i}`)], { version: v1 }),
      );
      expect(outcomes.filter((v) => v !== undefined)).toHaveLength(1);
      expect(await store().history.lastSeq('c1')).toBe(1);
    });

    it("persist: the writer's record and records, at the version it last wrote; another writer's fields survive; a stored customer message writes nothing", async () => {
      // Never written: nothing to be at, nobody else wrote it.
      const first = await store().conversations.persist(conversation('c1', { updatedAt: 1 }), [message('c1', 'm1', 'user')], {});
      expect(first).toMatchObject({ version: expect.any(Number), othersWrote: false });
      const v1 = (first as { version: number }).version;
      const mine = conversation('c1', { updatedAt: 2, lastMessageAt: 2, reviewedAt: 1, snapshot: { n: 2 } });
      const second = await store().conversations.persist(mine, [message('c1', 'r1')], { version: v1 });
      expect(second).toEqual({ version: v1 + 1, othersWrote: false, record: mine });
      expect(await store().conversations.get('c1')).toEqual(mine);
      // The reflection daemon writes its verdict: the writer's next record keeps it (and the verdict's time).
      const reflection = { verdict: 'resolved' as const, summary: 'done', at: 3 };
      await store().transaction(async (tx) => {
        const current = await tx.conversations.lock('c1');
        await tx.conversations.put(Object.assign({}, current!, { reflection, reviewedAt: 3, followupPending: { content: 'hi', decidedAt: 3 } }));
      });
      const stale = conversation('c1', { updatedAt: 4, lastMessageAt: 4, reviewedAt: 1, snapshot: { n: 4 } });
      const third = await store().conversations.persist(stale, [message('c1', 'r2')], { version: v1 + 1 });
      expect(third).toMatchObject({ version: v1 + 3, othersWrote: true });
      expect((third as { record: ConversationRecord }).record).toEqual(await store().conversations.get('c1'));
      expect(await store().conversations.get('c1')).toEqual(
        conversation('c1', { updatedAt: 4, lastMessageAt: 4, reviewedAt: 3, reflection, followupPending: { content: 'hi', decidedAt: 3 }, snapshot: { n: 4 } }),
      );
      // A new customer message clears the verdict's time, even one another writer set.
      await store().transaction(async (tx) => {
        const current = await tx.conversations.lock('c1');
        await tx.conversations.put(Object.assign({}, current!, { reviewedAt: 5 }));
      });
      const asked = conversation('c1', { updatedAt: 6, lastMessageAt: 6, lastCustomerMessageAt: 6, snapshot: { n: 6 } });
      expect(await store().conversations.persist(asked, [message('c1', 'm2', 'user')], { version: v1 + 3 })).toMatchObject({ othersWrote: true });
      expect(await store().conversations.get('c1')).toEqual(Object.assign({}, asked, { reflection, followupPending: { content: 'hi', decidedAt: 3 } }));
      const version = (await store().conversations.persist(asked, [], { version: v1 + 5 })) as { version: number };
      // A customer message already stored (the batch's other records too): nothing written, whichever way.
      const again = conversation('c1', { updatedAt: 7 });
      expect(await store().conversations.persist(again, [message('c1', 'r3'), message('c1', 'm1', 'user')], { version: version.version })).toEqual({
        seen: ['m1'],
      });
      expect(await store().conversations.persist(again, [message('c1', 'm2', 'user'), message('c1', 'm3', 'user')], {})).toEqual({ seen: ['m2'] });
      expect((await store().conversations.get('c1'))?.updatedAt).toBe(6);
      expect(await historyIds('c1')).toEqual(['1:m1', '2:r1', '3:r2', '4:m2']);
    });

    it('persist keeps every field of the records it appends and of the record, U+0000 included, on its fastest way too', async () => {
      const first = (await store().conversations.persist(conversation('c1', { snapshot: { said: 'a\u0000b' } }), [], {})) as { version: number };
      const records: MessageRecord[] = [
        { id: 'u1', conversationId: 'c1', role: 'user', text: 'hello\u0000there', at: 2, turnId: 't1', data: { content: [{ type: 'text', v: 'x\u0000' }] } },
        { id: 'call:invoked', conversationId: 'c1', role: 'tool', text: '', at: 3, turnId: 't1', data: { phase: 'invoked', args: { a: [1, null] } } },
        { id: 'p1', conversationId: 'c1', role: 'assistant', text: 'offer', at: 4, proactive: true },
      ];
      const next = conversation('c1', {
        externalId: 'e1',
        busy: true,
        state: '{"turn":"thinking"}',
        updatedAt: 5,
        lastMessageAt: 4,
        lastCustomerMessageAt: 2,
        pendingConfirmation: { id: 'cf', name: 'refund', args: { n: 1 }, summary: 'Refund' },
        handoff: { since: 3, source: 'api', reason: 'asked' },
        snapshot: { said: 'c\u0000d', n: 1.5 },
      });
      expect(await store().conversations.persist(next, records, { version: first.version })).toMatchObject({ othersWrote: false });
      expect(await store().conversations.get('c1')).toEqual(next);
      const stored = (await store().history.since('c1', 0)).map((r) => r.record);
      // PostgreSQL's text cannot hold U+0000 (db.ts `text`): U+FFFD stands for it there.
      expect(stored.map((r) => Object.assign({}, r, { text: r.text.replace('\uFFFD', '\u0000') }))).toEqual(records);
      expect(await store().history.seen('c1', 'u1')).toBe(true);
    });

    it('persist is fenced: with an owner it writes only while that node holds the conversation at that epoch, else throws', async () => {
      expect(
        await store().nodes.join({ nodeId: 'node-a', instance: 'i-a', leaseMs: 10_000, load: { sdkConnections: 0, sdkFunctions: 0, conversations: 0 } }),
      ).toBe(true);
      const claim = await store().ownership.claim('c1', 'node-a');
      if (!claim.claimed) throw new Error('node-a could not claim c1');
      const owner = { nodeId: 'node-a', epoch: claim.epoch };
      const first = (await store().conversations.persist(conversation('c1'), [], { owner })) as { version: number };
      for (const wrong of [
        { nodeId: 'node-b', epoch: claim.epoch },
        { nodeId: 'node-a', epoch: claim.epoch + 1 },
      ]) {
        await expect(
          store().conversations.persist(conversation('c1', { updatedAt: 3 }), [message('c1', 'x')], { version: first.version, owner: wrong }),
        ).rejects.toSatisfy(isOwnershipLost);
      }
      expect(await store().conversations.persist(conversation('c1', { updatedAt: 5 }), [message('c1', 'r1')], { version: first.version, owner })).toMatchObject(
        {
          version: first.version + 1,
          othersWrote: false,
        },
      );
      await store().ownership.release('c1', 'node-a', claim.epoch);
      await expect(store().conversations.persist(conversation('c1', { updatedAt: 6 }), [], { version: first.version + 1, owner })).rejects.toSatisfy(
        isOwnershipLost,
      );
      expect((await store().conversations.get('c1'))?.updatedAt).toBe(5);
      expect(await historyIds('c1')).toEqual(['1:r1']);
    });

    it("persist runs the channel's writes in its transaction: they see the record, and one that throws leaves nothing", async () => {
      const first = (await store().conversations.persist(conversation('c1'), [], {})) as { version: number };
      const outcome = await store().conversations.persist(
        conversation('c1', { updatedAt: 2 }),
        [message('c1', 'r1')],
        { version: first.version },
        async (tx) => {
          expect((await tx.conversations.lockFields('c1'))?.updatedAt).toBe(2);
          await tx.customers.save({ customerId: 'cus_written', externalId: 'ext-written', createdAt: 1 });
        },
      );
      expect(outcome).toMatchObject({ version: first.version + 1, othersWrote: false });
      expect(await store().customers.get('cus_written')).toMatchObject({ externalId: 'ext-written' });
      const refused = store().conversations.persist(conversation('c1', { updatedAt: 3 }), [message('c1', 'r2')], { version: first.version + 1 }, async (tx) => {
        await tx.customers.save({ customerId: 'cus_lost', externalId: 'ext-lost', createdAt: 1 });
        throw new Error('the outbound job could not be stored');
      });
      await expect(refused).rejects.toThrow('the outbound job could not be stored');
      expect(await store().customers.get('cus_lost')).toBeUndefined();
      expect((await store().conversations.get('c1'))?.updatedAt).toBe(2);
      expect(await historyIds('c1')).toEqual(['1:r1']);
    });

    it('lock holds even before the conversation exists: 30 concurrent create-or-increment give 30', async () => {
      await warmUp(store());
      await concurrently(30, () =>
        store().transaction(async (tx) => {
          const current = await tx.conversations.lock('new');
          const n = ((current?.snapshot as { n?: number } | undefined)?.n ?? 0) + 1;
          await tx.conversations.put(conversation('new', { snapshot: { n } }));
        }),
      );
      expect((await store().conversations.get('new'))?.snapshot).toEqual({ n: 30 });
    });
  });
}

for (const e of engines) describeConversationsContract(e.name, e.open);
