// Conversation outcomes on LMDB: `outcomes` conversationId → record; `outcomeIndex` holds two indexes kept in the
// same commit as the record: ['d', decideAt, conversationId] (open episodes, for the sweep) and
// ['s', startedAt, conversationId] (lists by time, newest first).
import type { ConversationOutcome, OutcomeFilter, OutcomeStore } from '../../outcomes.ts';
import type { KvScope } from '../kv.ts';

const dueKey = (o: ConversationOutcome) => (o.decideAt === undefined ? undefined : ['d', o.decideAt, o.conversationId]);
const startKey = (o: ConversationOutcome) => ['s', o.startedAt, o.conversationId];

const matches = (o: ConversationOutcome, f: OutcomeFilter) =>
  (f.channel === undefined || o.channel === f.channel) &&
  (f.status === undefined || o.status === f.status) &&
  (f.customerId === undefined || o.customerId === f.customerId);

export function lmdbOutcomes(s: KvScope): OutcomeStore {
  return {
    get: async (id) => s.get<ConversationOutcome>('outcomes', id),
    put: (outcome) =>
      s.atomically(async (tx) => {
        const before = tx.get<ConversationOutcome>('outcomes', outcome.conversationId);
        if (before) {
          const due = dueKey(before);
          if (due) await tx.remove('outcomeIndex', due);
          await tx.remove('outcomeIndex', startKey(before));
        }
        await tx.put('outcomes', outcome.conversationId, outcome);
        const due = dueKey(outcome);
        if (due) await tx.put('outcomeIndex', due, 1);
        await tx.put('outcomeIndex', startKey(outcome), 1);
      }),
    due: async (now, limit) => {
      const ids: string[] = [];
      for (const { key } of s.range('outcomeIndex', { start: ['d'], end: ['d', now, '\uffff'], limit })) ids.push((key as string[])[2]);
      return ids;
    },
    nextDue: async () => {
      for (const { key } of s.range('outcomeIndex', { start: ['d'], end: ['d', Infinity], limit: 1 })) return (key as [string, number])[1];
      return undefined;
    },
    list: async (f) => {
      const out: ConversationOutcome[] = [];
      const range = { start: ['s', f.until ?? Number.MAX_SAFE_INTEGER, '\uffff'], end: ['s', f.since ?? 0], reverse: true };
      for (const { key } of s.range('outcomeIndex', range)) {
        const o = s.get<ConversationOutcome>('outcomes', (key as string[])[2]);
        if (o && matches(o, f)) out.push(o);
        if (out.length >= f.limit) break;
      }
      return out;
    },
  };
}
