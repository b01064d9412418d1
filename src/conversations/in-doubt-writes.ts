// The last write of a conversation actor stopped by a lost lease, when it failed because the store did not answer,
// may have committed all the same (the answer was lost on the way back). Its actor is gone, so nothing would show what
// it stored. Once the store answers, its records are looked for and, if the write did commit (it is all or nothing),
// what it carried is published (the widget's reply, telemetry, observers) and what its transaction prepared to run
// once committed runs (its recorders': the outcome's telemetry events, a webhook queue woken), as for any commit. A write that committed did
// so before any takeover: after one, the epoch check refuses it.
//
// The look must come after the write can no longer commit. On PostgreSQL a COMMIT sent to a server that hung (SIGSTOP,
// a stalled disk) stays in the socket of its backend after the client gave up on it, and is carried out once the server
// resumes, possibly after a look that found nothing. So the look runs in a transaction that first takes the
// conversation's lock, which that write holds until it commits or aborts (`lookAfterWrites` below).
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { MessageRecord } from '../store/model.ts';
import type { Store } from '../store/repos.ts';
import type { ConversationMeta, CustomerInput, Pending } from './types.ts';
import type { ConversationOutput } from '../../machines/conversation.ts';

/** Records of the conversation's history read to find the write's own. */
const LOOK_BACK = 200;

/** The id of the history record an output is stored as (none: it has no record of its own). */
export function historyIdOf(o: ConversationOutput | CustomerInput): string | undefined {
  switch (o.type) {
    case 'customer':
      return o.messageId;
    case 'reply':
    case 'confirm':
    case 'agent':
    case 'handoff':
    case 'resolved':
      return o.id;
    case 'confirmation':
      return `${o.id}:${o.outcome}`;
    case 'tool':
      return `${o.callId}:${o.phase}`;
    default:
      return undefined;
  }
}

/** The conversation's last records, read once no write that took its lock before can still commit. */
export type SettledHistory = (conversationId: string, limit: number) => Promise<Pick<MessageRecord, 'id' | 'at'>[]>;

export const lookAfterWrites =
  (store: Pick<Store, 'transaction'>): SettledHistory =>
  (conversationId, limit) =>
    store.transaction(async (tx) => {
      await tx.conversations.lockFields(conversationId);
      return tx.history.recent(conversationId, limit);
    });

export function createInDoubtWrites(o: {
  history: SettledHistory;
  clock: Clock;
  logger: Logger;
  /** What a committed write's outputs get (host.ts `published`). */
  publish: (meta: ConversationMeta, entries: Pending[]) => void;
  /** Between two looks while the store still does not answer. */
  retryMs: number;
}) {
  const waiting = new Map<string, { meta: ConversationMeta; entries: Pending[]; afterCommit: (() => void)[] }>();
  let timer: TimerHandle | undefined;
  let stopped = false;

  const checkIn = (ms: number) => {
    if (timer !== undefined || stopped || waiting.size === 0) return;
    timer = o.clock.setTimeout(() => {
      timer = undefined;
      void check();
    }, ms);
  };

  const check = async () => {
    for (const [conversationId, d] of [...waiting]) {
      // Taken out before the read: a second check running meanwhile must not publish it too.
      if (waiting.get(conversationId) !== d) continue;
      waiting.delete(conversationId);
      let stored: Map<string, number>;
      try {
        stored = new Map((await o.history(conversationId, LOOK_BACK)).map((r) => [r.id, r.at]));
      } catch {
        if (!waiting.has(conversationId)) waiting.set(conversationId, d);
        return checkIn(o.retryMs);
      }
      // This write's own records: the same id *and* the time it was produced. The node that took the conversation
      // over redoes an unstored turn under the same ids, but at its own (later) times.
      const ours = (e: Pending) => {
        const id = historyIdOf(e.o);
        return id !== undefined && stored.get(id) === e.at;
      };
      if (d.entries.some(ours)) {
        o.logger.info({ conversationId, outputs: d.entries.length }, 'a write whose answer was lost had been stored: publishing what it carried');
        o.publish(d.meta, d.entries);
        for (const run of d.afterCommit) {
          try {
            run();
          } catch (err) {
            o.logger.warn({ err, conversationId }, 'after-commit step failed');
          }
        }
      }
    }
  };

  return {
    /** A stopped actor's write failed because the store did not answer: it may have committed (then `afterCommit` runs). */
    note(meta: ConversationMeta, entries: Pending[], afterCommit: (() => void)[] = []) {
      waiting.set(meta.conversationId, { meta, entries, afterCommit });
      checkIn(1000);
    },
    /** The store answers again: look now. */
    recovered: () => checkIn(0),
    stop() {
      stopped = true;
      o.clock.clearTimeout(timer);
    },
  };
}
