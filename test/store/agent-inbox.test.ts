// Contract: AgentInboxStore (src/store/repos.ts), on every engine of engines.ts: holds as a compare-and-set (also
// across two stores on one database: two nodes), resolutions, notes, saved replies, read marks.
import { describe, expect, it } from 'vitest';
import type { InboxAgent, SavedReply } from '../../src/store/model.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines, type EngineUnderTest } from './engines.ts';

const ada: InboxAgent = { agentId: 'ag_ada', name: 'Ada' };
const bob: InboxAgent = { agentId: 'ag_bob', name: 'Bob' };
const reply = (id: string, shortcut: string): SavedReply => ({ id, shortcut, text: `text of ${shortcut}`, createdBy: ada, createdAt: 1 });

export function describeAgentInboxContract(e: EngineUnderTest) {
  describe(`${e.name}: agent inbox`, () => {
    const store = freshStore(e.open);

    it('a claim holds the handoff; another agent is refused with the holder; the holder claims again; a new handoff is free', async () => {
      const first = await store().agentInbox.claim('c1', 100, ada, 110, [ada.agentId]);
      expect(first).toEqual({ ok: true, thread: { conversationId: 'c1', handoffSince: 100, holder: ada, claimedAt: 110, updatedAt: 110 } });
      expect(await store().agentInbox.claim('c1', 100, bob, 120, [bob.agentId])).toEqual({ ok: false, holder: ada });
      expect((await store().agentInbox.claim('c1', 100, ada, 130, [ada.agentId])).ok).toBe(true);
      // Handed over again later: the hold on the earlier handoff is over.
      expect(await store().agentInbox.claim('c1', 200, bob, 210, [bob.agentId])).toMatchObject({ ok: true, thread: { holder: bob } });
      expect((await store().agentInbox.thread('c1'))?.holder).toEqual(bob);
    });

    it('an assignment moves the hold only from the agent named as its holder', async () => {
      await store().agentInbox.claim('c1', 100, ada, 110, [ada.agentId]);
      expect(await store().agentInbox.claim('c1', 100, bob, 120, ['ag_someone_else'])).toEqual({ ok: false, holder: ada });
      expect(await store().agentInbox.claim('c1', 100, bob, 120, [ada.agentId])).toMatchObject({ ok: true, thread: { holder: bob } });
    });

    it('close ends the hold; a resolution is listed under resolved, newest first, until the conversation is claimed again', async () => {
      await store().agentInbox.claim('c1', 100, ada, 110, [ada.agentId]);
      await store().agentInbox.claim('c2', 100, ada, 110, [ada.agentId]);
      await store().agentInbox.close('c1', 100, 150, ada);
      await store().agentInbox.close('c2', 100, 160, bob);
      await store().agentInbox.close('c3', 100, 170);
      expect((await store().agentInbox.resolved(10)).map((t) => [t.conversationId, t.resolvedBy?.name])).toEqual([
        ['c2', 'Bob'],
        ['c1', 'Ada'],
      ]);
      expect(await store().agentInbox.thread('c3')).toEqual({ conversationId: 'c3', handoffSince: 100, updatedAt: 170 });
      // Nobody holds a resolved one: anyone may claim it.
      expect((await store().agentInbox.claim('c1', 100, bob, 180, [bob.agentId])).ok).toBe(true);
      expect((await store().agentInbox.resolved(10)).map((t) => t.conversationId)).toEqual(['c2']);
      expect((await store().agentInbox.threads(['c1', 'c2', 'nope'])).map((t) => t.conversationId).sort()).toEqual(['c1', 'c2']);
    });

    it('of 12 concurrent claims of one conversation by different agents exactly one wins, and every loser is told the winner', async () => {
      await warmUp(store());
      const results = await concurrently(12, (i) => store().agentInbox.claim('race', 5, { agentId: `ag_${i}`, name: `Agent ${i}` }, 10, [`ag_${i}`]));
      const winners = results.filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      const winner = winners[0].ok ? winners[0].thread.holder : undefined;
      for (const r of results) if (!r.ok) expect(r.holder).toEqual(winner);
      expect((await store().agentInbox.thread('race'))?.holder).toEqual(winner);
    });

    it('two stores on one database (two nodes) racing for one conversation: exactly one wins', async () => {
      const other = await e.sibling(store());
      try {
        await warmUp(store());
        const results = await concurrently(10, (i) =>
          (i % 2 ? other : store()).agentInbox.claim('two-nodes', 7, { agentId: `ag_${i}`, name: `Agent ${i}` }, 10, [`ag_${i}`]),
        );
        expect(results.filter((r) => r.ok)).toHaveLength(1);
      } finally {
        if (other !== store()) await other.close();
      }
    });

    it('notes: per conversation, oldest first', async () => {
      await store().agentInbox.addNote({ id: 'n2', conversationId: 'c1', author: bob, text: 'second', at: 20 });
      await store().agentInbox.addNote({ id: 'n1', conversationId: 'c1', author: ada, text: 'first', at: 10 });
      await store().agentInbox.addNote({ id: 'n3', conversationId: 'c2', author: ada, text: 'elsewhere', at: 15 });
      expect((await store().agentInbox.notes('c1')).map((n) => [n.text, n.author.name])).toEqual([
        ['first', 'Ada'],
        ['second', 'Bob'],
      ]);
      expect(await store().agentInbox.notes('none')).toEqual([]);
    });

    it('saved replies: by shortcut, a shortcut taken by another reply is refused, replaced by id, removed', async () => {
      expect(await store().agentInbox.putSavedReply(reply('r1', 'refund'))).toBe(true);
      expect(await store().agentInbox.putSavedReply(reply('r2', 'hello'))).toBe(true);
      expect(await store().agentInbox.putSavedReply(reply('r3', 'refund'))).toBe(false);
      expect(await store().agentInbox.putSavedReply(Object.assign(reply('r1', 'refund'), { text: 'new text' }))).toBe(true);
      expect((await store().agentInbox.savedReplies()).map((r) => [r.shortcut, r.text])).toEqual([
        ['hello', 'text of hello'],
        ['refund', 'new text'],
      ]);
      expect(await store().agentInbox.removeSavedReply('r2')).toBe(true);
      expect(await store().agentInbox.removeSavedReply('r2')).toBe(false);
      expect((await store().agentInbox.savedReplies()).map((r) => r.id)).toEqual(['r1']);
    });

    it('read marks: per agent, never moving back', async () => {
      await store().agentInbox.markRead('ag_ada', 'c1', 50);
      await store().agentInbox.markRead('ag_ada', 'c1', 40);
      await store().agentInbox.markRead('ag_bob', 'c2', 60);
      expect(await store().agentInbox.readMarks('ag_ada', ['c1', 'c2'])).toEqual({ c1: 50 });
      expect(await store().agentInbox.readMarks('ag_bob', ['c1', 'c2'])).toEqual({ c2: 60 });
    });
  });
}

for (const e of engines) describeAgentInboxContract(e);
