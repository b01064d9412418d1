// Conversations on LMDB: `conversations` conversationId → record (with its snapshot). The reflection daemon's work
// list is an index kept beside them in `proactive`, in step with every put:
//   ['review', lastMessageAt, conversationId] → 1   due for review (model.ts reviewDueAt)
//   ['followup', conversationId]              → 1   a follow-up decided and not yet settled
//   ['human', handoff.since, conversationId]  → 1   a person has it (the agent inbox)
import { OwnershipLostError } from '../../errors.ts';
import { keepOthersFields, reviewDueAt, type ConversationRecord, type ConversationSummary, type MessageRecord } from '../../model.ts';
import type { ConversationStore, OwnershipStore, StoreRepos } from '../../repos.ts';
import type { Key, KvScope } from '../kv.ts';
import { lmdbHistory } from './history.ts';

export const reviewKey = (lastMessageAt: number, conversationId: string) => ['review', lastMessageAt, conversationId];
export const followupKey = (conversationId: string) => ['followup', conversationId];
/** The agent inbox: `['human', handoff.since, conversationId]` while a person has the conversation. */
export const humanKey = (since: number, conversationId: string) => ['human', since, conversationId];

/** With telemetry persistence off there is no activity list to go by: read at most this many conversations. */
const MAX_SCANNED = 2000;

/** As stored: the record and its version (repos.ts `save`), which reads leave out. */
type Stored = ConversationRecord & { version?: number };

/** The record without the version it is stored with. */
export function fromStored(stored: Stored): ConversationRecord {
  const { version: _, ...record } = stored;
  return record;
}

const summary = (r: Stored): ConversationSummary => {
  const { snapshot: _, version: __, ...rest } = r;
  return rest;
};

/**
 * `ownerOf`: who owns a conversation now (the cluster's ownership), for the owner checks of `saveIfUnchanged` and
 * `persist`; `reposOn`: the repositories of a transaction, for `persist`'s channel writes.
 */
export function lmdbConversations(s: KvScope, ownerOf?: OwnershipStore['owner'], reposOn?: (tx: KvScope) => StoreRepos): ConversationStore {
  const get = async (id: string) => {
    const stored = s.get<Stored>('conversations', id);
    return stored && fromStored(stored);
  };
  /**
   * Every put keeps the index in step, but a key that disagrees with its record (the record moved on or is gone:
   * data from an older build, or a bug) would otherwise be listed, and fill the work list, forever. Dropped where
   * it is found; a key the record agrees with again by then stays.
   */
  const dropStale = async (keys: Key[]) => {
    if (keys.length === 0) return;
    await s.atomically(async (tx) => {
      for (const key of keys) {
        const [kind, a, b] = key as [string, number | string, string?];
        const r = tx.get<ConversationRecord>('conversations', kind === 'followup' ? (a as string) : (b as string));
        const stale = kind === 'review' ? reviewDueAt(r) !== a : kind === 'human' ? r?.handoff?.since !== a : r?.followupPending === undefined;
        if (stale) await tx.remove('proactive', key);
      }
    });
  };
  const putIn = (scope: KvScope, record: ConversationRecord) =>
    scope.atomically(async (tx) => {
      const previous = tx.get<Stored>('conversations', record.conversationId);
      const id = record.conversationId;
      const wasDue = reviewDueAt(previous);
      const isDue = reviewDueAt(record);
      if (wasDue !== isDue) {
        if (wasDue !== undefined) await tx.remove('proactive', reviewKey(wasDue, id));
        if (isDue !== undefined) await tx.put('proactive', reviewKey(isDue, id), 1);
      }
      const hadFollowup = previous?.followupPending !== undefined;
      const hasFollowup = record.followupPending !== undefined;
      if (hadFollowup && !hasFollowup) await tx.remove('proactive', followupKey(id));
      if (!hadFollowup && hasFollowup) await tx.put('proactive', followupKey(id), 1);
      const wasWithHuman = previous?.handoff?.since;
      const isWithHuman = record.handoff?.since;
      if (wasWithHuman !== isWithHuman) {
        if (wasWithHuman !== undefined) await tx.remove('proactive', humanKey(wasWithHuman, id));
        if (isWithHuman !== undefined) await tx.put('proactive', humanKey(isWithHuman, id), 1);
      }
      const version = (previous?.version ?? 0) + 1;
      await tx.put('conversations', id, Object.assign({}, record, { version }));
      return version;
    });
  const saveIn = (scope: KvScope, record: ConversationRecord, messages: MessageRecord[]) =>
    scope.atomically(async (tx) => {
      const history = lmdbHistory(tx);
      for (const m of messages) await history.append(m);
      return putIn(tx, record);
    });
  return {
    get,
    lock: get,
    lockFields: async (id) => {
      const stored = s.get<Stored>('conversations', id);
      return stored && summary(stored);
    },
    put: async (record) => {
      await putIn(s, record);
    },
    save: (record, messages) => saveIn(s, record, messages),
    saveIfUnchanged: (record, messages, { version, owner }) =>
      s.atomically(async (tx) => {
        const id = record.conversationId;
        if (tx.get<Stored>('conversations', id)?.version !== version) return undefined;
        if (owner) {
          if (!ownerOf) throw new Error('saveIfUnchanged: this scope cannot check an owner');
          const current = await ownerOf(id);
          if (current?.nodeId !== owner.nodeId || current.epoch !== owner.epoch) return undefined;
        }
        const history = lmdbHistory(tx);
        for (const m of messages) if (m.role === 'user' && (await history.seen(id, m.id))) return undefined;
        return saveIn(tx, record, messages);
      }),
    // One transaction: on LMDB the checks cost no round trip, and the channel's writes join it.
    persist: (record, messages, { version, owner }, channelWrites) =>
      s.atomically(async (tx) => {
        const id = record.conversationId;
        if (owner) {
          if (!ownerOf) throw new Error('persist: this scope cannot check an owner');
          const current = await ownerOf(id);
          if (current?.nodeId !== owner.nodeId || current.epoch !== owner.epoch) throw new OwnershipLostError(id, owner.nodeId, owner.epoch, current);
        }
        const history = lmdbHistory(tx);
        const seen: string[] = [];
        for (const m of messages) if (m.role === 'user' && (await history.seen(id, m.id))) seen.push(m.id);
        if (seen.length) return { seen };
        const stored = tx.get<Stored>('conversations', id);
        const othersWrote = stored !== undefined && stored.version !== version;
        const toWrite = othersWrote ? keepOthersFields(summary(stored), record, messages) : record;
        const written = await saveIn(tx, toWrite, messages);
        if (channelWrites) {
          if (!reposOn) throw new Error('persist: this scope cannot run channel writes');
          await channelWrites(reposOn(tx));
        }
        return { version: written, othersWrote, record: toWrite };
      }),
    busy: async () => {
      const out = [];
      for (const { value } of s.range<ConversationRecord>('conversations')) {
        if (value.busy) out.push({ conversationId: value.conversationId, customerId: value.customerId, externalId: value.externalId, channel: value.channel });
      }
      return out;
    },
    dueForReview: async (cutoff, limit) => {
      if (limit <= 0) return [];
      const out: { conversationId: string; lastMessageAt: number }[] = [];
      const stale: Key[] = [];
      for (const { key } of s.range('proactive', { start: ['review'], end: ['review', cutoff, '\uffff'] })) {
        const [, lastMessageAt, conversationId] = key as [string, number, string];
        if (reviewDueAt(s.get<ConversationRecord>('conversations', conversationId)) !== lastMessageAt) stale.push(key);
        else if (out.push({ conversationId, lastMessageAt }) >= limit) break;
      }
      await dropStale(stale);
      return out;
    },
    withPendingFollowup: async (limit) => {
      if (limit <= 0) return [];
      const out: string[] = [];
      const stale: Key[] = [];
      for (const { key } of s.range('proactive', { start: ['followup'], end: ['followup', '\uffff'] })) {
        const conversationId = (key as [string, string])[1];
        if (s.get<ConversationRecord>('conversations', conversationId)?.followupPending === undefined) stale.push(key);
        else if (out.push(conversationId) >= limit) break;
      }
      await dropStale(stale);
      return out;
    },
    withHuman: async ({ before, limit }) => {
      if (limit <= 0) return [];
      const out: ConversationSummary[] = [];
      const stale: Key[] = [];
      const start = before ? humanKey(before.since, before.conversationId) : ['human', Infinity];
      for (const { key } of s.range('proactive', { start, end: ['human'], reverse: true })) {
        const [, since, conversationId] = key as [string, number, string];
        if (before && since === before.since && conversationId === before.conversationId) continue;
        const r = s.get<ConversationRecord>('conversations', conversationId);
        if (r?.handoff?.since !== since) stale.push(key);
        else if (out.push(summary(r)) >= limit) break;
      }
      await dropStale(stale);
      return out;
    },
    summaries: async ({ ids, limit }) => {
      if (ids) {
        const out: ConversationSummary[] = [];
        for (const id of ids.slice(0, limit)) {
          const r = s.get<Stored>('conversations', id);
          if (r) out.push(summary(r));
        }
        return out;
      }
      const all: ConversationSummary[] = [];
      for (const { value } of s.range<Stored>('conversations', { limit: MAX_SCANNED })) all.push(summary(value));
      all.sort((a, b) => (b.lastMessageAt ?? b.updatedAt) - (a.lastMessageAt ?? a.updatedAt));
      return all.slice(0, limit);
    },
  };
}
