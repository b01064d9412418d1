// Virtual conversation actors (as in Orleans / Durable Objects).
//
// A conversation actor is activated on its first event, restored from its stored snapshot when it has one, and
// passivated after `session.idle_minutes`. Each actor is its own root actor (one conversation's failure can't reach
// another or the supervisor) and is registered with the supervisor for diagnostics and passivation.
//
// Durability: after every transition the persisted snapshot is written together with everything the transition
// produced (the customer message it queued, the reply it emitted, outbound jobs) in ONE write (`conversations.persist`),
// and only then are outputs pushed live. A crash therefore either loses a whole transition (and the restored actor
// redoes it: its invoked LLM/SDK step runs again, with the same invocationId) or keeps it whole — a reply is never sent
// twice and an acknowledged message is never lost. `typing` and the reply's text while the LLM writes it (deltas) are
// live only and never stored.
//
// This file: activation, passivation and the public API. The parts (README "The conversation host"):
// conversation-actors.ts (the actors and what happens when one cannot go on), write-loop.ts (one conversation's writes,
// its states), conversation-write.ts (one write, and what a committed one publishes), records.ts (outputs as records
// and telemetry, pure), cluster-inbox.ts (events for conversations another node owns), in-doubt-writes.ts.
import type { Customer } from '../customers/repo.ts';
import { isOwnershipLost, StoreUnavailableError } from '../store/errors.ts';
import type { Channel, ConversationMeta, ConversationRecord, PendingConfirmation } from '../store/model.ts';
import type { InboxEvent } from '../store/repos.ts';
import { adopt, drainInbox, knownMessage, onOwner, toInbox } from './cluster-inbox.ts';
import { conversationLogic, retire, startActor } from './conversation-actors.ts';
import { publish } from './conversation-write.ts';
import { createInDoubtWrites, lookAfterWrites } from './in-doubt-writes.ts';
import { conversationIdFor } from './history.ts';
import { stateName } from './records.ts';
import { HeldElsewhere, type Active, type HostDeps, type Runtime } from './runtime.ts';
import type { CustomerInput, HandoffResult } from './types.ts';
import { STORE_RETRY_MS } from './write-loop.ts';

export type { Channel, ConversationMeta, ConversationRecord, PendingConfirmation } from '../store/model.ts';
export type { ChannelSink, CustomerInput, HandoffResult, OutputObserver, OutputRecorder, Pending } from './types.ts';
export type { HostDeps } from './runtime.ts';
export { MAX_WRITE_ATTEMPTS } from './write-loop.ts';

export interface ConversationHost {
  /**
   * Resolves once the customer message is durable (then it will be answered, crash or not). `ack`: its acknowledgement
   * to the sender, sent by the channel's sink in order with the outputs of the write that stores it (not called for a
   * message stored already, nor one handed to its owner's inbox: the caller acknowledges those once this resolves).
   */
  receive(
    customer: Pick<Customer, 'customerId' | 'externalId'>,
    channel: Channel,
    message: { messageId: string; text: string; content?: object },
    ack?: () => void,
  ): Promise<{ conversationId: string; duplicate: boolean }>;
  confirm(conversationId: string, confirmationId: string, approve: boolean): Promise<boolean>;
  record(conversationId: string): Promise<ConversationRecord | undefined>;
  pendingConfirmation(conversationId: string): Promise<PendingConfirmation | undefined>;
  /** A person takes the conversation over (at once when idle, else when the running turn ends). */
  /** `agentId`: the signed-in agent who asks for it (attributed in telemetry and webhooks). */
  handoff(conversationId: string, reason?: string, agentId?: string): Promise<HandoffResult>;
  /** The assistant takes it back; only while a person has it. */
  /** `agentId`: the signed-in agent who releases it (attributed in telemetry and webhooks). */
  release(conversationId: string, agentId?: string): Promise<HandoffResult>;
  /** An agent resolved it: with a person, released (the release says resolved); otherwise the resolve is recorded. */
  resolve(conversationId: string, by: { agentId: string; name: string }): Promise<HandoffResult>;
  /** An agent's reply, delivered to the customer once durable; only while a person has the conversation. */
  agentMessage(conversationId: string, message: { id: string; text: string; author: { name: string; agentId?: string } }): Promise<HandoffResult>;
  /** Activates every conversation that was mid-turn when the process stopped (and that no other live node owns). */
  resumeBusy(): Promise<number>;
  /** Applies the conversation's inbox entries, claiming the conversation when nobody live owns it. */
  drainInbox(conversationId: string): Promise<void>;
  /** Takes over a conversation whose owner is gone: claims it, resumes its turn or timers, applies its inbox. */
  adopt(conversationId: string): Promise<boolean>;
  /** This node lost its lease: stop every actor at once, writing and sending nothing more. */
  relinquishAll(): void;
  passivate(conversationIds: string[]): Promise<void>;
  /** Active conversations with no event since `cutoff` (ms). */
  idleSince(cutoff: number): string[];
  activeCount(): number;
  isActive(conversationId: string): boolean;
  /** Dropped after repeated write failures, and not yet due to come back by itself. */
  isResting(conversationId: string): boolean;
  /** `human`: while a person has it, since when and the last agent who wrote (none yet: nobody answered). */
  list(): { conversationId: string; state: unknown; queued: number; human?: { since: number; agent?: { name: string; agentId?: string } } }[];
  stop(): Promise<void>;
  /** Resolves when every requested write so far is durable. */
  settle(): Promise<void>;
}

export function createConversationHost(deps: HostDeps): ConversationHost {
  return new Host(deps);
}

const metaFor = (customer: Pick<Customer, 'customerId' | 'externalId'>, channel: Channel): ConversationMeta => ({
  conversationId: conversationIdFor(customer.customerId, channel),
  customerId: customer.customerId,
  externalId: customer.externalId,
  channel,
});

const orNothing = () => undefined;

class Host implements ConversationHost {
  private readonly active = new Map<string, Active>();
  /** Conversations being read from the store to be activated: one actor per conversation, however many events race. */
  private readonly activating = new Map<string, Promise<Active>>();
  /** Per conversation: the last message still on its way to the actor (inArrivalOrder). */
  private readonly arrivals = new Map<string, Promise<void>>();
  private readonly resting = new Map<string, number>();
  private stopping = false;
  /** Lease losses so far: an activation that spans one was claimed for the lost lease and must not start its actor. */
  private leaseLosses = 0;
  private readonly rt: Runtime;
  private readonly logic: ReturnType<typeof conversationLogic>;
  private readonly inDoubt: ReturnType<typeof createInDoubtWrites>;
  private readonly unsubscribeRecovery: () => void;

  constructor(private readonly deps: HostDeps) {
    const { store, clock, logger } = deps.services;
    const log = logger.child({ component: 'conversations' });
    this.rt = {
      deps,
      log,
      active: this.active,
      resting: this.resting,
      stopping: () => this.stopping,
      activate: (meta) => this.activate(meta),
      inDoubt: (meta, entries, afterCommit) => this.inDoubt.note(meta, entries, afterCommit),
    };
    this.logic = conversationLogic(this.rt);
    // A stopped actor's write that may have committed unseen (in-doubt-writes.ts).
    this.inDoubt = createInDoubtWrites({
      history: lookAfterWrites(store),
      clock,
      logger: log,
      publish: (meta, entries) => publish(this.rt, meta, entries),
      retryMs: STORE_RETRY_MS,
    });
    // Writes that waited for the store go as soon as it writes again.
    this.unsubscribeRecovery = store.onRecovered(() => {
      for (const a of this.active.values()) if (a.writes.state === 'waitingForStore') a.writes.retry();
      this.inDoubt.recovered();
    });
  }

  private get store() {
    return this.deps.services.store;
  }

  private now(): number {
    return this.deps.services.clock.now();
  }

  /**
   * Runs `step` after the steps of the messages that reached this conversation before it: the reads that precede the
   * actor (seen? restore?) may be answered out of order (a pool of connections), and the customer's messages must
   * reach the actor in the order they arrived.
   */
  private inArrivalOrder = <T>(conversationId: string, step: () => Promise<T>): Promise<T> => {
    const next = (this.arrivals.get(conversationId) ?? Promise.resolve()).then(step);
    const settled = next.then(orNothing, orNothing);
    this.arrivals.set(conversationId, settled);
    void settled.then(() => {
      if (this.arrivals.get(conversationId) === settled) this.arrivals.delete(conversationId);
    });
    return next;
  };

  /** The conversation's actor: the live one, or one restored from its stored record (one read, however many callers race). */
  private activate(meta: ConversationMeta): Promise<Active> {
    const existing = this.active.get(meta.conversationId);
    if (existing && !existing.writes.final) return Promise.resolve(existing);
    let pending = this.activating.get(meta.conversationId);
    if (!pending) {
      pending = this.restore(meta).finally(() => this.activating.delete(meta.conversationId));
      this.activating.set(meta.conversationId, pending);
    }
    return pending;
  }

  private async restore(meta: ConversationMeta): Promise<Active> {
    const losses = this.leaseLosses;
    // Claimed first, then read: the claim waits for the previous owner's open write, so the read sees it.
    const acquired = this.deps.cluster ? await this.deps.cluster.ownership.acquire(meta.conversationId) : undefined;
    if (acquired && 'heldBy' in acquired) throw new HeldElsewhere(acquired.heldBy);
    const saved = await this.store.conversations.get(meta.conversationId);
    // relinquishAll ran meanwhile: the claim belongs to the lease that was lost.
    if (this.leaseLosses !== losses)
      throw new StoreUnavailableError('not_member', 'this node lost its cluster lease while the conversation was being activated');
    let written: Active['written'];
    if (saved) {
      const { snapshot: _, ...fields } = saved;
      written = { fields };
    }
    this.resting.delete(meta.conversationId);
    return startActor(this.rt, this.logic, meta, saved, acquired?.epoch, written);
  }

  private async receiveHere(meta: ConversationMeta, message: { messageId: string; text: string; content?: object }, ack: (() => void) | undefined) {
    const accepted = await this.inArrivalOrder(meta.conversationId, async () => {
      // Messages reach the actor one at a time (inArrivalOrder): one check before it, and the write's under the lock.
      const live = this.active.get(meta.conversationId);
      const known = await knownMessage(this.rt, meta.conversationId, message.messageId, live && !live.writes.final ? live : undefined);
      if (known === 'stored') return { duplicate: true };
      // Re-sent before the first copy is durable: acknowledged with it, once the write that carries it has committed.
      if (known === 'queued' && live) {
        if (ack) live.writes.alsoAck(message.messageId, ack);
        return { duplicate: true, durable: live.writes.requestWrite() };
      }
      const a = await this.activate(meta);
      a.lastActiveAt = this.now();
      const at = this.now();
      const input: CustomerInput = { type: 'customer', messageId: message.messageId, text: message.text, content: message.content };
      if (ack) input.ack = ack;
      a.writes.add({ o: input, at });
      const durable = a.writes.requestWrite();
      a.actor.send({ type: 'customer.message', at, messageId: message.messageId, text: message.text });
      return { duplicate: false, durable };
    });
    await accepted.durable;
    return { conversationId: meta.conversationId, duplicate: accepted.duplicate };
  }

  async receive(
    customer: Pick<Customer, 'customerId' | 'externalId'>,
    channel: Channel,
    message: { messageId: string; text: string; content?: object },
    ack?: () => void,
  ) {
    const meta = metaFor(customer, channel);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.receiveHere(meta, message, ack);
      } catch (err) {
        if (err instanceof HeldElsewhere) {
          const event: InboxEvent = { type: 'customer', customerId: meta.customerId, channel, message };
          if (meta.externalId !== undefined) event.externalId = meta.externalId;
          await toInbox(this.rt, err.owner, meta.conversationId, event);
          return { conversationId: meta.conversationId, duplicate: false };
        }
        // Taken over while this message was being written (nothing was): it goes to the new owner.
        if (isOwnershipLost(err) && attempt < 3) continue;
        throw err;
      }
    }
  }

  /** Sends `event` to the live actor and resolves once the write that carries what it produced is durable. */
  private async sendDurably(a: Active, event: Parameters<Active['actor']['send']>[0]): Promise<void> {
    const durable = a.writes.requestWrite();
    a.actor.send(event);
    await durable;
  }

  async confirm(conversationId: string, confirmationId: string, approve: boolean) {
    const record = await this.store.conversations.get(conversationId);
    if (!record || record.pendingConfirmation?.id !== confirmationId) return false;
    return onOwner(
      this.rt,
      conversationId,
      async (a) => {
        await this.sendDurably(a, { type: 'customer.confirm', at: this.now(), confirmationId, approve });
        return true;
      },
      async (owner) => {
        await toInbox(this.rt, owner, conversationId, { type: 'confirm', confirmationId, approve });
        return true;
      },
      false,
    );
  }

  handoff(conversationId: string, reason?: string, agentId?: string) {
    const asked = Object.assign({}, reason === undefined ? {} : { reason }, agentId === undefined ? {} : { agentId });
    return onOwner<HandoffResult>(
      this.rt,
      conversationId,
      async (a) => {
        if (a.actor.getSnapshot().value === 'withHuman') return { ok: true, state: 'withHuman' };
        await this.sendDurably(a, Object.assign({ type: 'handoff.request' as const, at: this.now() }, asked));
        return { ok: true, state: stateName(a.actor.getSnapshot().value) };
      },
      async (owner, record) => {
        await toInbox(this.rt, owner, conversationId, Object.assign({ type: 'handoff' as const }, asked));
        // Idle or waiting for a confirmation (cancelled): the owner hands it over at once; mid-turn: when the turn ends.
        return { ok: true, state: record.state === 'idle' || record.handoff || record.pendingConfirmation ? 'withHuman' : record.state };
      },
      { ok: false, code: 'not_found' },
    );
  }

  release(conversationId: string, agentId?: string) {
    const by = agentId === undefined ? {} : { agentId };
    return onOwner<HandoffResult>(
      this.rt,
      conversationId,
      async (a) => {
        if (a.actor.getSnapshot().value !== 'withHuman') return { ok: false, code: 'not_handed_off' };
        await this.sendDurably(a, Object.assign({ type: 'handoff.release' as const, at: this.now(), by: 'agent' as const }, by));
        return { ok: true, state: stateName(a.actor.getSnapshot().value) };
      },
      async (owner, record) => {
        if (!record.handoff) return { ok: false, code: 'not_handed_off' };
        await toInbox(this.rt, owner, conversationId, Object.assign({ type: 'release' as const }, by));
        return { ok: true, state: 'idle' };
      },
      { ok: false, code: 'not_found' },
    );
  }

  resolve(conversationId: string, by: { agentId: string; name: string }) {
    return onOwner<HandoffResult>(
      this.rt,
      conversationId,
      async (a) => {
        await this.sendDurably(a, { type: 'resolve', at: this.now(), by });
        return { ok: true, state: stateName(a.actor.getSnapshot().value) };
      },
      async (owner, record) => {
        await toInbox(this.rt, owner, conversationId, { type: 'resolve', by });
        return { ok: true, state: record.handoff ? 'idle' : record.state };
      },
      { ok: false, code: 'not_found' },
    );
  }

  agentMessage(conversationId: string, message: { id: string; text: string; author: { name: string; agentId?: string } }) {
    const { id, text } = message;
    const author = message.author.agentId === undefined ? { name: message.author.name } : { name: message.author.name, agentId: message.author.agentId };
    return onOwner<HandoffResult>(
      this.rt,
      conversationId,
      async (a) => {
        if (a.actor.getSnapshot().value !== 'withHuman') return { ok: false, code: 'not_handed_off' };
        await this.sendDurably(a, { type: 'agent.message', at: this.now(), id, text, author });
        return { ok: true, state: 'withHuman' };
      },
      async (owner, record) => {
        if (!record.handoff) return { ok: false, code: 'not_handed_off' };
        await toInbox(this.rt, owner, conversationId, { type: 'agent', message: { id, text, author } });
        return { ok: true, state: 'withHuman' };
      },
      { ok: false, code: 'not_found' },
    );
  }

  record(conversationId: string) {
    return this.store.conversations.get(conversationId);
  }

  async pendingConfirmation(conversationId: string) {
    return (await this.store.conversations.get(conversationId))?.pendingConfirmation;
  }

  async resumeBusy() {
    let n = 0;
    for (const meta of await this.store.conversations.busy()) {
      if (this.active.has(meta.conversationId)) continue;
      try {
        await this.activate(meta);
      } catch (err) {
        if (err instanceof HeldElsewhere) continue; // its owner is alive and has it
        throw err;
      }
      n++;
    }
    if (n) this.rt.log.info({ resumed: n }, 'resumed conversations that were mid-turn');
    return n;
  }

  drainInbox(conversationId: string) {
    return drainInbox(this.rt, this.inArrivalOrder, conversationId);
  }

  adopt(conversationId: string) {
    return adopt(this.rt, this.inArrivalOrder, conversationId);
  }

  relinquishAll() {
    this.leaseLosses++;
    // The database's doing (the lease could not be renewed), not a request's: callers answer it as unavailable.
    const lost = new StoreUnavailableError('not_member', 'this node lost its cluster lease');
    for (const a of [...this.active.values()]) {
      a.writes.stop(lost);
      retire(this.rt, a);
    }
  }

  async passivate(ids: string[]) {
    for (const id of ids) {
      const a = this.active.get(id);
      if (!a) {
        this.deps.lifecycle?.passivated(id);
        continue;
      }
      const quiet = () => a.actor.getSnapshot().value === 'idle' && a.writes.quiet;
      if (!quiet()) continue;
      await a.writes.requestWrite().catch(orNothing);
      // A message may have arrived while the last write was in flight: it was acknowledged to this actor.
      if (a.writes.final || this.active.get(id) !== a || !quiet()) continue;
      retire(this.rt, a);
      // Given up, so that the node its next event reaches claims it (a failed release only keeps it here).
      if (a.epoch !== undefined) await this.deps.cluster!.ownership.release(id, a.epoch).catch(orNothing);
    }
  }

  idleSince(cutoff: number) {
    return [...this.active.values()].filter((a) => a.lastActiveAt < cutoff).map((a) => a.meta.conversationId);
  }

  activeCount() {
    return this.active.size;
  }

  isActive(conversationId: string) {
    return this.active.get(conversationId)?.writes.final === false;
  }

  isResting(conversationId: string) {
    return this.now() < (this.resting.get(conversationId) ?? 0);
  }

  list() {
    return [...this.active.values()].map((a) => {
      const snap = a.actor.getSnapshot();
      const human = snap.value === 'withHuman' ? snap.context.human : undefined;
      return Object.assign(
        { conversationId: a.meta.conversationId, state: snap.value, queued: snap.context.queue.length },
        human ? { human: { since: human.since, ...(human.agent ? { agent: human.agent } : {}) } } : {},
      );
    });
  }

  async settle() {
    await Promise.all([...this.active.values()].map((a) => a.writes.flush()));
    await this.store.flushed();
  }

  async stop() {
    this.stopping = true;
    this.unsubscribeRecovery();
    this.inDoubt.stop();
    await this.settle();
    for (const a of this.active.values()) {
      a.writes.stop();
      a.actor.stop();
    }
    this.active.clear();
  }
}
