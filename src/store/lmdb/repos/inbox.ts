// The durable inbox on LMDB: `inbox` ['e', conversationId, id] → entry, and ['last'] → the last id given. One process
// holds an LMDB store, so it owns every conversation and posts nothing here in practice; the repository keeps the
// contract all the same (test/store/inbox.test.ts runs on both engines).
import type { InboxEntry, InboxStore } from '../../repos.ts';
import type { KvScope } from '../kv.ts';
import type { MemoryCluster } from '../cluster.ts';

export function lmdbInbox(s: KvScope, cluster: Pick<MemoryCluster, 'attended' | 'ownerOf'>): InboxStore {
  /** Conversations with an entry that `matches`, by their oldest such entry, at most `limit`. */
  const oldestFirst = (matches: (entry: InboxEntry) => boolean, limit: number) => {
    const first = new Map<string, number>();
    for (const { value } of s.range<InboxEntry>('inbox', { start: ['e'], end: ['e', '\uffff'] })) {
      if (!first.has(value.conversationId) && matches(value)) first.set(value.conversationId, value.id);
    }
    return [...first]
      .sort((a, b) => a[1] - b[1])
      .slice(0, Math.max(0, limit))
      .map(([id]) => id);
  };
  const entries = (conversationId: string) =>
    [...s.range<InboxEntry>('inbox', { start: ['e', conversationId, -Infinity], end: ['e', conversationId, Infinity] })].map((r) => r.value);
  return {
    post: (conversationId, event, at) =>
      s.atomically(async (tx) => {
        const id = (tx.get<number>('inbox', ['last']) ?? 0) + 1;
        const entry: InboxEntry = { id, conversationId, event, at };
        await tx.put('inbox', ['last'], id);
        await tx.put('inbox', ['e', conversationId, id], entry);
        return entry;
      }),
    list: async (conversationId) => entries(conversationId),
    remove: async (ids) => {
      if (!ids.length) return;
      const wanted = new Set(ids);
      await s.atomically(async (tx) => {
        for (const { key, value } of [...tx.range<InboxEntry>('inbox', { start: ['e'], end: ['e', '\uffff'] })]) {
          if (wanted.has(value.id)) await tx.remove('inbox', key);
        }
      });
    },
    unattended: async (limit) => oldestFirst((e) => !cluster.attended(e.conversationId), limit),
    overdue: async (nodeId, before, limit) => oldestFirst((e) => e.at < before && cluster.ownerOf(e.conversationId) === nodeId, limit),
  };
}
