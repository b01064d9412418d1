// Takeover (issue 17, part 3): every sweep, a member node claims the conversations that have work waiting and no
// live owner (their node's lease ended or it died: a turn in flight, a confirmation or handoff timer, a follow-up, or
// inbox entries) and resumes them: the restored actor re-arms its timers and runs its turn again with the same
// invocationId. Conversations this node owns with work waiting that it is not running are picked up too. Idle
// conversations of a dead node are not claimed here; their next event claims them. When the bus
// resyncs (notices may have been missed), the inboxes of this node's active conversations are drained again, and so
// is the inbox of an active conversation of this node whose entry has waited longer than two sweeps: its wake-up was
// lost while the LISTEN connection stayed up (a notice whose statement failed), and nothing else would drain it.
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import type { ClusterBus, InboxStore, OwnershipStore } from '../store/repos.ts';
import type { MembershipStatus } from './membership.ts';

/** Conversations looked at per sweep (those with work waiting come first). */
const BATCH = 100;

/** What takeover needs of the conversation host (src/conversations/host.ts implements it; the host is a floor up). */
export interface TakeoverHost {
  /** Takes over a conversation whose owner is gone: claims it, resumes its turn or timers, applies its inbox. */
  adopt(conversationId: string): Promise<boolean>;
  /** Applies the conversation's inbox entries, claiming the conversation when nobody live owns it. */
  drainInbox(conversationId: string): Promise<void>;
  list(): { conversationId: string }[];
  isActive(conversationId: string): boolean;
  /** Dropped after repeated write failures: it comes back by itself, or with its next event. */
  isResting(conversationId: string): boolean;
}

export interface TakeoverOptions {
  ownership: Pick<OwnershipStore, 'orphaned' | 'waitingOn'>;
  inbox: Pick<InboxStore, 'unattended' | 'overdue'>;
  bus: Pick<ClusterBus, 'onResync'>;
  host: TakeoverHost;
  /** Real time (ms) as the inbox's entries are stamped. */
  now: () => number;
  status: () => MembershipStatus;
  nodeId: () => string;
  clock: Clock;
  logger: Logger;
  everyMs: number;
}

export function createTakeover(o: TakeoverOptions) {
  const log = o.logger.child({ component: 'cluster', part: 'takeover' });
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let stopResync: (() => void) | undefined;

  async function sweep() {
    if (o.status() !== 'member') return;
    const [orphans, unattended, mine, overdue] = await Promise.all([
      o.ownership.orphaned(BATCH),
      o.inbox.unattended(BATCH),
      o.ownership.waitingOn(o.nodeId(), BATCH),
      o.inbox.overdue(o.nodeId(), o.now() - 2 * o.everyMs, BATCH),
    ]);
    const ids = new Set([
      ...orphans.filter((c) => c.waiting).map((c) => c.conversationId),
      ...unattended,
      // Owned here, with work waiting, and not running: its activation failed after the claim, or a notice was missed.
      ...mine.filter((id) => !o.host.isActive(id) && !o.host.isResting(id)),
    ]);
    let adopted = 0;
    for (const id of ids) {
      if (stopped) return;
      try {
        if (await o.host.adopt(id)) adopted++;
      } catch (err) {
        // The store away, or this node rejoining after a lost lease: the next sweep tries again, nothing to debug.
        const cause = isStoreUnavailable(err) ? { message: err.message, code: err.code } : err;
        log.warn({ err: cause, conversationId: id }, 'could not take the conversation over');
      }
    }
    if (adopted) log.info({ adopted }, 'took over conversations whose node is gone');
    const unheard = overdue.filter((id) => o.host.isActive(id));
    for (const id of unheard) {
      if (stopped) return;
      await o.host.drainInbox(id).catch((err: unknown) => log.debug({ err: { message: (err as Error).message }, conversationId: id }, 'inbox not drained'));
    }
    if (unheard.length) log.warn({ conversations: unheard.length }, 'drained inboxes whose wake-up was lost');
  }

  const schedule = () => {
    if (stopped) return;
    timer = o.clock.setTimeout(() => {
      running = sweep()
        .catch((err: unknown) => log.debug({ err: { message: (err as Error).message } }, 'takeover sweep failed'))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, o.everyMs);
  };

  return {
    start() {
      stopResync = o.bus.onResync(() => {
        for (const { conversationId } of o.host.list()) void o.host.drainInbox(conversationId).catch(() => undefined);
      });
      schedule();
    },
    /** One sweep now (tests, and a node that just joined). */
    sweep: () => sweep(),
    async stop() {
      stopped = true;
      stopResync?.();
      o.clock.clearTimeout(timer);
      await running;
    },
  };
}
