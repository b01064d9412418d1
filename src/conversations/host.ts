// Virtual conversation actors (as in Orleans / Durable Objects).
//
// A conversation actor is activated on its first event, restored from its
// LMDB snapshot when it has one, and passivated after `session.idle_minutes`.
// Each actor is its own root actor (one conversation's failure can't reach
// another or the supervisor) and is registered with the supervisor for
// diagnostics and passivation.
//
// Durability: after every transition the persisted snapshot is written
// together with everything the transition produced (the customer message it
// queued, the reply it emitted, outbound jobs) in ONE LMDB transaction, and
// only then are outputs pushed live. A crash therefore either loses a whole
// transition (and the restored actor redoes it: its invoked LLM/SDK step
// runs again, with the same invocationId) or keeps it whole — a reply is
// never sent twice and an acknowledged message is never lost. `typing` and the
// reply's text while the LLM writes it (deltas) are live only and never stored.
import { createActor, fromPromise, type Actor } from 'xstate';
import {
  abandonedTurnOutputs,
  conversationMachine,
  isKnownMessage,
  type ConversationContext,
  type ConversationOutput,
  type InvokeOutcome,
  type LlmStepInput,
  type LlmStepOutput,
  type Timed,
} from '../../machines/conversation.ts';
import { xstateClock } from '../clock.ts';
import type { Customer } from '../customers/repo.ts';
import type { Services } from '../services.ts';
import { conversationIdFor } from './history.ts';
import type { Channel, ConversationMeta, ConversationRecord, MessageRecord, PendingConfirmation } from '../store/model.ts';
import type { StoreRepos } from '../store/repos.ts';
import { isOwnershipLost, isStoreUnavailable, StoreUnavailableError } from '../store/errors.ts';
import type { ConversationOwnership } from '../cluster/conversation-ownership.ts';
import type { InboxEntry, InboxEvent } from '../store/repos.ts';
import type { LiveStep } from './llm-step.ts';
import type { ReplyDelta } from './reply-stream.ts';
import { createInDoubtWrites, lookAfterWrites } from './in-doubt-writes.ts';

export type { Channel, ConversationMeta, ConversationRecord, PendingConfirmation } from '../store/model.ts';

/** What a channel does with a conversation's outputs. */
export interface ChannelSink {
  /** Inside the persist transaction: make the output durable for this channel (e.g. an outbound job). */
  write?(tx: StoreRepos, meta: ConversationMeta, output: ConversationOutput): Promise<void>;
  /** After commit: push it live (open widget sockets). Must not throw. */
  deliver?(meta: ConversationMeta, output: ConversationOutput): void;
  /** A piece of the reply being written: live only, at once, never stored (like `typing`). */
  stream?(meta: ConversationMeta, delta: ReplyDelta): void;
}

/** `content`: the message as structured data (a WhatsApp location, photo, flow reply…), kept in history as `data.content`. */
export type CustomerInput = { type: 'customer'; messageId: string; text: string; content?: object };
/**
 * An output with the time it was produced (not the time it was committed): events and history keep the order things
 * happened in. `inboxId`: the inbox entry it came from, removed in the write that stores it.
 */
export type Pending = { o: ConversationOutput | CustomerInput; at: number; inboxId?: number };
/** Sees every output (and customer message) once it is durable, in order; must not throw. */
export type OutputObserver = (meta: ConversationMeta, entry: Pending) => void;
export type OutputRecorder = (tx: StoreRepos, meta: ConversationMeta, written: Pending[]) => Promise<() => void>;

export type HandoffResult = { ok: true; state: string } | { ok: false; code: 'not_found' | 'not_handed_off' };

interface Active {
  meta: ConversationMeta;
  actor: Actor<typeof conversationMachine>;
  pending: Pending[];
  persistRequested?: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void };
  writing: boolean;
  /** Consecutive failed writes (reset by a successful one). */
  failures: number;
  lastActiveAt: number;
  stopped: boolean;
  /** Restored mid-turn: until then, a call to a function not (yet) registered waits for the SDK to come back. */
  resumeUntil?: number;
  /** The last write failed because the store could not write at all; retried when it recovers. */
  waitingForStore?: boolean;
  /** The fencing epoch this node holds the conversation at (set when the host runs in a cluster). */
  epoch?: number;
  /** Inbox entries handed to the actor (not applied twice while their removal is being written). */
  inboxTaken: Set<number>;
  /** Inbox entries to remove in the next write (those that stored nothing: a message already known). */
  inboxDone: number[];
  /** The record as this actor's last write left it, and its version: the next write needs no read while nobody else wrote it. */
  written?: { fields: Omit<ConversationRecord, 'snapshot'>; version: number };
}

/** The conversation belongs to another live node: its events go to that node's inbox. */
class HeldElsewhere extends Error {
  constructor(readonly owner: string) {
    super(`the conversation is owned by node ${owner}`);
  }
}

export interface HostDeps {
  services: Services;
  /** Stamps its output with `at` (the clock's time when the LLM answered). */
  llmStep: (input: LlmStepInput, live: LiveStep) => Promise<Timed<LlmStepOutput>>;
  invokeTool: (
    input: { invocationId: string; name: string; args: unknown; conversationId: string; customerId: string },
    meta: ConversationMeta,
  ) => Promise<InvokeOutcome>;
  sinks: Partial<Record<Channel, ChannelSink>>;
  /** After each commit, in order (the SDK's handoff notifications). */
  observers?: OutputObserver[];
  /**
   * Inside the persist transaction, with the outputs it writes (outbound webhook events, so that an event exists
   * exactly when its fact does); returns what to run once committed (wake a queue). Throwing aborts the write.
   */
  recorders?: OutputRecorder[];
  /**
   * Several nodes on one database (issue 17): claims and fencing, and how to wake the owner of a conversation this
   * node does not own once an event is in its inbox. Without it every conversation is this process's (tests of the
   * host alone).
   */
  cluster?: {
    ownership: ConversationOwnership;
    notifyOwner(nodeId: string, conversationId: string): Promise<void>;
    /** False once this node may have lost its lease: nothing live (typing, reply deltas) is shown then. */
    holdsLease(): boolean;
  };
  /** Registration with the supervisor runtime (diagnostics list every live actor). */
  lifecycle?: {
    activated(meta: ConversationMeta, actor: Actor<typeof conversationMachine>): void;
    passivated(conversationId: string): void;
  };
}

export interface ConversationHost {
  /** Resolves once the customer message is durable (then it will be answered, crash or not). */
  receive(
    customer: Pick<Customer, 'customerId' | 'externalId'>,
    channel: Channel,
    message: { messageId: string; text: string; content?: object },
  ): Promise<{ conversationId: string; duplicate: boolean }>;
  confirm(conversationId: string, confirmationId: string, approve: boolean): Promise<boolean>;
  record(conversationId: string): Promise<ConversationRecord | undefined>;
  pendingConfirmation(conversationId: string): Promise<PendingConfirmation | undefined>;
  /** A person takes the conversation over (at once when idle, else when the running turn ends). */
  handoff(conversationId: string, reason?: string): Promise<HandoffResult>;
  /** The assistant takes it back; only while a person has it. */
  release(conversationId: string): Promise<HandoffResult>;
  /** An agent's reply, delivered to the customer once durable; only while a person has the conversation. */
  agentMessage(conversationId: string, message: { id: string; text: string; author: { name: string } }): Promise<HandoffResult>;
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
  list(): { conversationId: string; state: unknown; queued: number }[];
  stop(): Promise<void>;
  /** Resolves when every requested write so far is durable. */
  settle(): Promise<void>;
}

/** Failed writes in a row before the turn is abandoned; as many again before the actor is dropped. */
export const MAX_WRITE_ATTEMPTS = 5;
/** A write that failed because the store could not write at all is tried again this often until it recovers. */
const STORE_RETRY_MS = 5000;
/** A conversation dropped after repeated write failures is brought back from its last stored state after this. */
const REACTIVATE_AFTER_MS = 60_000;
const retryDelayMs = (failures: number) => Math.min(4000, 250 * 2 ** (failures - 1));

function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

export function createConversationHost(deps: HostDeps): ConversationHost {
  const { services } = deps;
  const { store, clock, logger, telemetry, config } = services;
  const active = new Map<string, Active>();
  /** Conversations being read from the store to be activated: one actor per conversation, however many events race. */
  const activating = new Map<string, Promise<Active>>();
  /** Per conversation: the last message still on its way to the actor (inArrivalOrder). */
  const arrivals = new Map<string, Promise<void>>();
  let stopping = false;
  /** Lease losses so far: an activation that spans one was claimed for the lost lease and must not start its actor. */
  let leaseLosses = 0;

  const log = logger.child({ component: 'conversations' });
  // A stopped actor's write that may have committed unseen (in-doubt-writes.ts); `published` is below.
  const inDoubt = createInDoubtWrites({
    history: lookAfterWrites(store),
    clock,
    logger: log,
    publish: (meta, entries) => published(meta, entries),
    retryMs: STORE_RETRY_MS,
  });
  // Writes that waited for the store go as soon as it writes again.
  const unsubscribeRecovery = store.onRecovered(() => {
    for (const a of active.values()) if (a.waitingForStore) void requestPersist(a).catch(() => undefined);
    inDoubt.recovered();
  });

  // Message text reaches telemetry only with telemetry.store_text (default off): see README, "Telemetry".
  const withText = (data: Record<string, unknown>, text: string, key = 'text') => {
    if (config.telemetry.store_text) data[key] = text;
    return data;
  };
  const emitTelemetry = (meta: ConversationMeta, { o, at }: Pending) => {
    const base = { at, conversationId: meta.conversationId, customerId: meta.customerId, customerExternalId: meta.externalId, channel: meta.channel };
    switch (o.type) {
      case 'customer':
        return telemetry.event({
          type: 'message.in',
          data: withText({ messageId: o.messageId, turnId: `${meta.conversationId}:${o.messageId}`, length: o.text.length }, o.text),
          ...base,
        });
      case 'reply':
        return telemetry.event({ type: 'message.out', data: withText({ id: o.id, turnId: o.turnId, length: o.text.length }, o.text), ...base });
      case 'turn':
        return telemetry.event({ type: `turn.${o.phase}`, data: { turnId: o.turnId, messageId: o.messageId }, ...base });
      case 'tool':
        return telemetry.event({
          type: `tool.${o.phase}`,
          data:
            o.phase === 'invoked'
              ? { turnId: o.turnId, callId: o.callId, name: o.name }
              : { turnId: o.turnId, callId: o.callId, name: o.name, durationMs: o.durationMs, error: o.error },
          ...base,
        });
      case 'confirm':
        return telemetry.event({ type: 'confirmation.requested', data: withText({ id: o.id, turnId: o.turnId, name: o.name }, o.summary, 'summary'), ...base });
      case 'confirmation':
        return telemetry.event({ type: `confirmation.${o.outcome}`, data: { id: o.id, turnId: o.turnId, name: o.name }, ...base });
      case 'agent':
        return telemetry.event({ type: 'message.agent', data: withText({ id: o.id, author: o.author, length: o.text.length }, o.text), ...base });
      case 'handoff':
        if (o.phase === 'requested') {
          const data: Record<string, unknown> = { source: o.source };
          if (o.reason !== undefined) data.reason = o.reason;
          if (o.turnId !== undefined) data.turnId = o.turnId;
          return telemetry.event({ type: 'handoff.requested', data, ...base });
        }
        if (o.phase === 'released') return telemetry.event({ type: 'handoff.released', data: { by: o.by }, ...base });
        return telemetry.event({ type: 'handoff.joined', data: { agent: o.agent }, ...base });
      default:
        return undefined;
    }
  };

  /**
   * In the persist transaction; resolves false when the output was not written (a customer message already stored).
   * Its history records go to `messages`, appended with the conversation's record in one write (`conversations.save`).
   * Without a transaction (the one-statement write, `conversations.saveIfUnchanged`) the store checks for stored
   * customer messages itself, and no output needs its channel's `write` (`writesAlone`).
   */
  const writeOutput = async (
    tx: StoreRepos | undefined,
    a: Active,
    record: ConversationRecord,
    messages: MessageRecord[],
    { o, at }: Pending,
  ): Promise<boolean> => {
    const id = a.meta.conversationId;
    switch (o.type) {
      case 'customer':
        // The authority on duplicates: every committed message, and this batch's.
        if (messages.some((m) => m.role === 'user' && m.id === o.messageId) || (tx && (await tx.history.seen(id, o.messageId)))) return false;
        messages.push({
          id: o.messageId,
          conversationId: id,
          role: 'user',
          text: o.text,
          at,
          turnId: `${id}:${o.messageId}`,
          ...(o.content ? { data: { content: o.content } } : {}),
        });
        record.lastMessageAt = at;
        record.lastCustomerMessageAt = at;
        record.reviewedAt = undefined;
        break;
      case 'reply':
        messages.push({ id: o.id, conversationId: id, role: 'assistant', text: o.text, at, turnId: o.turnId });
        record.lastMessageAt = at;
        break;
      case 'tool':
        if (o.phase === 'invoked') {
          messages.push({
            id: `${o.callId}:invoked`,
            conversationId: id,
            role: 'tool',
            text: '',
            at,
            turnId: o.turnId,
            data: { phase: 'invoked', name: o.name, args: o.args },
          });
        } else {
          const data: Record<string, unknown> = { phase: o.phase, name: o.name, ok: o.phase === 'result', content: o.content, durationMs: o.durationMs };
          if (o.error !== undefined) data.error = o.error;
          messages.push({ id: `${o.callId}:${o.phase}`, conversationId: id, role: 'tool', text: o.error ?? '', at, turnId: o.turnId, data });
        }
        break;
      case 'confirm':
        record.pendingConfirmation = { id: o.id, name: o.name, args: o.args, summary: o.summary };
        messages.push({
          id: o.id,
          conversationId: id,
          role: 'confirmation',
          text: o.summary,
          at,
          turnId: o.turnId,
          data: { name: o.name, outcome: 'requested' },
        });
        break;
      case 'agent':
        messages.push({ id: o.id, conversationId: id, role: 'agent', text: o.text, at, data: { author: o.author } });
        record.lastMessageAt = at;
        if (record.handoff) record.handoff = Object.assign({}, record.handoff, { agent: o.author });
        break;
      case 'handoff': {
        const data: Record<string, unknown> = { phase: o.phase };
        if (o.phase === 'requested') {
          record.handoff = { since: at, source: o.source };
          if (o.reason !== undefined) record.handoff.reason = data.reason = o.reason;
          data.source = o.source;
        } else if (o.phase === 'released') {
          record.handoff = undefined;
          data.by = o.by;
        } else data.agent = o.agent;
        messages.push({ id: o.id, conversationId: id, role: 'handoff', text: o.phase, at, data });
        break;
      }
      case 'confirmation':
        record.pendingConfirmation = undefined;
        messages.push({
          id: `${o.id}:${o.outcome}`,
          conversationId: id,
          role: 'confirmation',
          text: o.outcome,
          at,
          data: { name: o.name, outcome: o.outcome },
        });
        break;
      default:
        break;
    }
    if (tx && o.type !== 'customer') await deps.sinks[a.meta.channel]?.write?.(tx, a.meta, o);
    return true;
  };

  /**
   * Whether this write can skip the transaction: the actor's last write is known (nothing to read back), and nothing
   * but the record and its history is written (no inbox entries to remove, no outputs to record for webhooks, none
   * for the channel to queue).
   */
  const writesAlone = (a: Active, batch: Pending[], inboxDone: number[]) =>
    a.written !== undefined &&
    inboxDone.length === 0 &&
    !deps.recorders?.length &&
    batch.every((e) => e.inboxId === undefined && (e.o.type === 'customer' || !deps.sinks[a.meta.channel]?.write));

  /** The record as this write leaves it: the fields others write kept from `previous`, the rest from the actor. */
  const recordFor = (a: Active, previous: Omit<ConversationRecord, 'snapshot'> | undefined, snapshot: unknown, value: unknown): ConversationRecord =>
    Object.assign({}, previous, a.meta, {
      snapshot,
      state: stateName(value),
      busy: value !== 'idle',
      updatedAt: clock.now(),
    });

  const runWrites = async (a: Active) => {
    a.writing = true;
    try {
      while (a.persistRequested) {
        const request = a.persistRequested;
        a.persistRequested = undefined;
        const batch = a.pending.splice(0);
        const inboxDone = a.inboxDone.splice(0);
        const snapshot = a.actor.getPersistedSnapshot();
        const value = a.actor.getSnapshot().value;
        let written = batch;
        let afterCommit: (() => void)[] = [];
        let saved: { record: ConversationRecord; version: number } | undefined;
        try {
          if (writesAlone(a, batch, inboxDone)) {
            // Nobody else wrote the record since this actor did: its last write is the latest record. Checked by the
            // store under the conversation's lock, with the owner (fenced, as below); if anything differs, nothing
            // was written and the transaction below does the write.
            const record = recordFor(a, a.written!.fields, snapshot, value);
            const messages: MessageRecord[] = [];
            written = [];
            for (const entry of batch) if (await writeOutput(undefined, a, record, messages, entry)) written.push(entry);
            const owner = a.epoch === undefined ? undefined : { nodeId: deps.cluster!.ownership.nodeId(), epoch: a.epoch };
            const version = await store.conversations.saveIfUnchanged(record, messages, { version: a.written!.version, owner });
            if (version !== undefined) saved = { record, version };
          }
          if (!saved)
            await store.transaction(async (tx) => {
              // Fenced: a node that lost the conversation to another writes nothing (and learns it here).
              if (a.epoch !== undefined) await deps.cluster!.ownership.assert(tx, a.meta.conversationId, a.epoch);
              // Fields others write (the daemon's verdict and follow-up) are kept from the latest record.
              const record = recordFor(a, await tx.conversations.lockFields(a.meta.conversationId), snapshot, value);
              written = [];
              afterCommit = [];
              const messages: MessageRecord[] = [];
              for (const entry of batch) if (await writeOutput(tx, a, record, messages, entry)) written.push(entry);
              const version = await tx.conversations.save(record, messages);
              const taken = inboxDone.concat(batch.filter((e) => e.inboxId !== undefined).map((e) => e.inboxId!));
              if (taken.length) await tx.inbox.remove(taken);
              for (const recordOutputs of deps.recorders ?? []) afterCommit.push(await recordOutputs(tx, a.meta, written));
              saved = { record, version };
            });
        } catch (err) {
          // Keep the outputs; the next write (retried below) carries them.
          a.pending.unshift(...batch);
          a.inboxDone.unshift(...inboxDone);
          request.reject(err);
          if (isOwnershipLost(err)) {
            fenced(a, err);
            break;
          }
          if (isStoreUnavailable(err) && a.stopped) {
            inDoubt.note(a.meta, batch);
            continue;
          }
          if (isStoreUnavailable(err)) {
            // The whole store cannot write (a full disk, the database away): not this conversation's fault, so
            // nothing is abandoned. The write is retried when the store recovers, and on a slow timer meanwhile.
            if (!a.waitingForStore) log.warn({ conversationId: a.meta.conversationId, cause: err.code }, 'conversation write waits for the store');
            a.waitingForStore = true;
            if (!stopping && !a.stopped) clock.setTimeout(() => retryPersist(a), STORE_RETRY_MS);
            continue;
          }
          a.failures++;
          log.error({ err, conversationId: a.meta.conversationId, attempt: a.failures }, 'conversation write failed');
          telemetry.event({
            type: 'error',
            conversationId: a.meta.conversationId,
            data: { where: 'conversation.persist', message: (err as Error).message, attempt: a.failures },
          });
          if (stopping || a.stopped) continue;
          // Bounded: what can't be written (a snapshot that won't encode) must not be retried forever.
          if (a.failures >= 2 * MAX_WRITE_ATTEMPTS) deactivate(a);
          else if (a.failures === MAX_WRITE_ATTEMPTS) abandonTurn(a);
          else clock.setTimeout(() => retryPersist(a), retryDelayMs(a.failures));
          continue;
        }
        const { snapshot: _, ...fields } = saved!.record;
        a.written = { fields, version: saved!.version };
        a.failures = 0;
        a.waitingForStore = false;
        // The entries it removed stay in inboxTaken: a drain may hold a list it read before this commit.
        for (const run of afterCommit) {
          try {
            run();
          } catch (err) {
            log.warn({ err }, 'after-commit step failed');
          }
        }
        request.resolve();
        // The acknowledgements waiting on this write (the widget's `ack`, a webhook's 200) go out first: one write can
        // carry a customer message and its reply (a fast turn while the previous write was flushing), and a reply must
        // never reach a widget ahead of the `ack` of the message it answers.
        if (written.some((e) => e.o.type === 'customer') && written.some((e) => e.o.type !== 'customer')) {
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        published(a.meta, written);
      }
    } finally {
      a.writing = false;
    }
  };

  /** Outputs now durable: telemetry, observers, and live delivery, in order. */
  const published = (meta: ConversationMeta, written: Pending[]) => {
    for (const entry of written) {
      emitTelemetry(meta, entry);
      for (const observe of deps.observers ?? []) {
        try {
          observe(meta, entry);
        } catch (err) {
          log.warn({ err }, 'output observer failed');
        }
      }
      if (entry.o.type !== 'customer') {
        try {
          deps.sinks[meta.channel]?.deliver?.(meta, entry.o);
        } catch (err) {
          log.warn({ err }, 'live delivery failed');
        }
      }
    }
  };

  /** A retry timer firing: nothing to do once the actor was replaced or dropped (its successor has its own writes). */
  const retryPersist = (a: Active) => {
    if (a.stopped || stopping) return;
    void requestPersist(a).catch(() => undefined);
  };

  function requestPersist(a: Active): Promise<void> {
    // A stopped actor writes nothing more: its snapshot no longer follows what it was sent, so a message written with
    // it would be stored as if answered (not busy) and acknowledged, and nobody would answer it.
    if (a.stopped) return Promise.reject(new StoreUnavailableError('stopped', 'the conversation was stopped on this node; send it again'));
    if (!a.persistRequested) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      a.persistRequested = { promise, resolve, reject };
      // Deferred to a microtask: the transition that asked must finish first,
      // so the snapshot written includes its effects.
      if (!a.writing) queueMicrotask(() => void runWrites(a));
    }
    return a.persistRequested.promise;
  }

  // The reply's text as it is written: straight to the channel, like `typing`. Once the step's actor is
  // stopped (its turn abandoned, the process stopping) nothing more is shown.
  const streamLive = (conversationId: string, delta: ReplyDelta, signal: AbortSignal) => {
    const a = active.get(conversationId);
    if (!a || signal.aborted || (deps.cluster && !deps.cluster.holdsLease())) return;
    try {
      deps.sinks[a.meta.channel]?.stream?.(a.meta, delta);
    } catch {
      /* live only */
    }
  };

  // One provided machine for every conversation (providing per actor would copy the machine
  // definition into each one); effects find their conversation by the id in context.
  const logic = conversationMachine.provide({
    actors: {
      llm: fromPromise<Timed<LlmStepOutput>, LlmStepInput>(({ input, signal }) => {
        const channel = active.get(input.conversationId)?.meta.channel;
        const streams = channel !== undefined && deps.sinks[channel]?.stream !== undefined;
        return deps.llmStep(input, { signal, onDelta: streams ? (delta) => streamLive(input.conversationId, delta, signal) : undefined });
      }),
      invokeTool: fromPromiseLogic((input: Parameters<HostDeps['invokeTool']>[0]) => {
        const a = active.get(input.conversationId);
        if (!a)
          return Promise.resolve<Timed<InvokeOutcome>>({ ok: false, error: { message: 'conversation is not active', code: 'inactive' }, at: clock.now() });
        const call = a.resumeUntil === undefined ? deps.invokeTool(input, a.meta) : invokeOnceBack(a, input);
        return call.then(
          (outcome): Timed<InvokeOutcome> => Object.assign({}, outcome, { at: clock.now() }),
          (err: unknown): Timed<InvokeOutcome> => ({ ok: false, error: { message: String((err as Error)?.message ?? err) }, at: clock.now() }),
        );
      }),
    } as never,
    actions: {
      emit: ({ context }: { context: { conversationId: string } }, params: ConversationOutput) => {
        const a = active.get(context.conversationId);
        if (!a) return;
        if (params.type === 'typing') {
          if (deps.cluster && !deps.cluster.holdsLease()) return;
          // Live only, at once; nothing to store (it used to be delivered a second time after the commit).
          try {
            deps.sinks[a.meta.channel]?.deliver?.(a.meta, params);
          } catch {
            /* live only */
          }
          return;
        }
        // The turn resumed after a restart is over: later calls to an unknown function fail at once.
        if (params.type === 'turn' && params.phase === 'ended') a.resumeUntil = undefined;
        a.pending.push({ o: params, at: clock.now() });
        void requestPersist(a).catch(() => undefined);
      },
    } as never,
  });

  /**
   * A turn resumed after a restart usually runs before the SDK has reconnected: its call (same
   * invocationId) waits for the function to be registered again, up to the invoke timeout, instead
   * of failing as unknown at once.
   */
  const invokeOnceBack = async (a: Active, input: Parameters<HostDeps['invokeTool']>[0]): Promise<InvokeOutcome> => {
    for (;;) {
      const outcome = await deps.invokeTool(input, a.meta);
      if (outcome.ok || outcome.error.code !== 'unknown_function' || a.stopped || clock.now() >= (a.resumeUntil ?? 0)) return outcome;
      await new Promise<void>((resolve) => clock.setTimeout(() => resolve(), 200));
    }
  };

  const retire = (a: Active) => {
    a.stopped = true;
    a.actor.stop();
    if (active.get(a.meta.conversationId) === a) active.delete(a.meta.conversationId);
    deps.lifecycle?.passivated(a.meta.conversationId);
  };

  /** Another node claimed the conversation (this one was paused or cut off): stop its actor; write and send nothing. */
  const fenced = (a: Active, err: { message: string }) => {
    log.warn({ conversationId: a.meta.conversationId, epoch: a.epoch, cause: err.message }, 'conversation taken over by another node: its actor here stops');
    a.pending = [];
    a.inboxDone = [];
    a.persistRequested?.reject(err);
    a.persistRequested = undefined;
    retire(a);
  };

  /**
   * The actor's writes keep failing, or the actor itself failed: replace it with an idle one that keeps
   * its queue and the messages it has seen, drop the current turn's unwritten outputs, and answer that
   * turn with the apology. Later messages are answered as usual.
   */
  const abandonTurn = (a: Active) => {
    const context = a.actor.getSnapshot().context as ConversationContext;
    const turn = context.turn;
    const kept = a.pending.filter((e) => !(turn && 'turnId' in e.o && e.o.turnId === turn.turnId && e.o.type !== 'turn'));
    log.error(
      { conversationId: a.meta.conversationId, turnId: turn?.turnId, dropped: a.pending.length - kept.length },
      'conversation turn abandoned: it could not be stored',
    );
    a.pending = [];
    const waiting = a.persistRequested;
    a.persistRequested = undefined;
    retire(a);
    const idle = logic.getPersistedSnapshot(logic.resolveState({ value: 'idle', context: Object.assign({}, context, { turn: undefined }) }));
    const fresh = activateFrom(a.meta, { snapshot: idle, busy: false }, a.epoch);
    fresh.failures = a.failures;
    fresh.inboxTaken = a.inboxTaken;
    fresh.inboxDone = a.inboxDone;
    const at = clock.now();
    fresh.pending.push(...kept, ...abandonedTurnOutputs(turn).map((o) => ({ o, at })));
    const durable = requestPersist(fresh);
    if (waiting) durable.then(waiting.resolve, waiting.reject);
    void durable.catch(() => undefined);
  };

  /** Still failing after the turn was abandoned: stop retrying. The next message resumes from the last stored state. */
  const deactivate = (a: Active) => {
    log.error({ conversationId: a.meta.conversationId, dropped: a.pending.length }, 'conversation deactivated after repeated write failures');
    a.pending = [];
    a.persistRequested?.reject(new Error('conversation deactivated after repeated write failures'));
    a.persistRequested = undefined;
    retire(a);
    // What it acknowledged is in its last stored state (messages are acknowledged only once stored): bring it back
    // from there later, so those messages are answered even if the customer writes nothing more.
    clock.setTimeout(() => {
      if (!stopping && !active.has(a.meta.conversationId)) void activate(a.meta).catch((err) => log.warn({ err }, 'conversation could not be brought back'));
    }, REACTIVATE_AFTER_MS);
  };

  /**
   * Runs `step` after the steps of the messages that reached this conversation before it: the reads that precede
   * the actor (seen? restore?) may be answered out of order (a pool of connections), and the customer's messages
   * must reach the actor in the order they arrived.
   */
  const inArrivalOrder = <T>(conversationId: string, step: () => Promise<T>): Promise<T> => {
    const next = (arrivals.get(conversationId) ?? Promise.resolve()).then(step);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    arrivals.set(conversationId, settled);
    void settled.then(() => {
      if (arrivals.get(conversationId) === settled) arrivals.delete(conversationId);
    });
    return next;
  };

  /** The conversation's actor: the live one, or one restored from its stored record (one read, however many callers race). */
  const activate = (meta: ConversationMeta): Promise<Active> => {
    const existing = active.get(meta.conversationId);
    if (existing && !existing.stopped) return Promise.resolve(existing);
    let pending = activating.get(meta.conversationId);
    if (!pending) {
      pending = (async () => {
        const losses = leaseLosses;
        // Claimed first, then read: the claim waits for the previous owner's open write, so the read sees it.
        const acquired = deps.cluster ? await deps.cluster.ownership.acquire(meta.conversationId) : undefined;
        if (acquired && 'heldBy' in acquired) throw new HeldElsewhere(acquired.heldBy);
        const saved = await store.conversations.get(meta.conversationId);
        // relinquishAll ran meanwhile: the claim belongs to the lease that was lost.
        if (leaseLosses !== losses)
          throw new StoreUnavailableError('not_member', 'this node lost its cluster lease while the conversation was being activated');
        return activateFrom(meta, saved, acquired?.epoch);
      })().finally(() => activating.delete(meta.conversationId));
      activating.set(meta.conversationId, pending);
    }
    return pending;
  };

  /** Starts the conversation's actor from `saved` (its snapshot; none: a new conversation), unless one is live. */
  const activateFrom = (meta: ConversationMeta, saved: { snapshot?: unknown; busy?: boolean } | undefined, epoch: number | undefined): Active => {
    const existing = active.get(meta.conversationId);
    if (existing && !existing.stopped) return existing;
    const a = {
      meta,
      pending: [],
      writing: false,
      failures: 0,
      lastActiveAt: clock.now(),
      stopped: false,
      epoch,
      inboxTaken: new Set<number>(),
      inboxDone: [],
    } as unknown as Active;
    if (saved?.busy) a.resumeUntil = clock.now() + config.safety.invoke_timeout_ms;
    const input = {
      conversationId: meta.conversationId,
      customerId: meta.customerId,
      channel: meta.channel,
      maxToolSteps: config.llm.max_tool_steps,
      confirmationTimeoutMs: config.safety.confirmation_timeout_seconds * 1000,
      humanIdleMs: config.handoff.idle_minutes * 60_000,
    };
    // Settings live in context; a snapshot keeps the ones it was made with (or none, from before they existed).
    const snapshot = saved?.snapshot as { context?: Record<string, unknown> } | undefined;
    if (snapshot?.context) snapshot.context.humanIdleMs = input.humanIdleMs;
    a.actor = createActor(logic, {
      input,
      snapshot: snapshot as never,
      clock: xstateClock(clock),
    });
    a.actor.subscribe({
      next: () => {
        a.lastActiveAt = clock.now();
        void requestPersist(a).catch(() => undefined);
      },
      error: (err) => {
        log.error({ err, conversationId: meta.conversationId }, 'conversation actor failed');
        telemetry.event({
          type: 'error',
          conversationId: meta.conversationId,
          customerId: meta.customerId,
          data: { where: 'conversation.actor', message: (err as Error)?.message },
        });
        // Not from inside the actor's own notification.
        queueMicrotask(() => {
          if (a.stopped || stopping) return;
          try {
            abandonTurn(a);
          } catch (e) {
            log.error({ err: e, conversationId: meta.conversationId }, 'conversation could not be recovered');
            deactivate(a);
          }
        });
      },
    });
    active.set(meta.conversationId, a);
    a.actor.start();
    deps.lifecycle?.activated(meta, a.actor);
    if (saved?.snapshot) a.actor.send({ type: 'restored', at: clock.now() } as never);
    return a;
  };

  const metaFor = (customer: Pick<Customer, 'customerId' | 'externalId'>, channel: Channel): ConversationMeta => ({
    conversationId: conversationIdFor(customer.customerId, channel),
    customerId: customer.customerId,
    externalId: customer.externalId,
    channel,
  });

  /** Stores the event for the conversation's owner (durable when this resolves), then wakes the owner. */
  const toInbox = async (owner: string, conversationId: string, event: InboxEvent) => {
    await store.inbox.post(conversationId, event, clock.now());
    // Only a wake-up: an owner that misses it (or dies) still finds the entry (bus resync, takeover sweep).
    void deps.cluster?.notifyOwner(owner, conversationId).catch((err: unknown) => log.debug({ err }, 'inbox notice not sent'));
  };

  const metaOfRecord = (r: ConversationRecord): ConversationMeta => ({
    conversationId: r.conversationId,
    customerId: r.customerId,
    externalId: r.externalId,
    channel: r.channel,
  });

  /** The stored conversation's actor here, or, when another live node owns it, `remote(owner, record)`. */
  const onOwner = async <T>(
    conversationId: string,
    local: (a: Active) => Promise<T>,
    remote: (owner: string, record: ConversationRecord) => Promise<T>,
    missing: T,
  ): Promise<T> => {
    const live = active.get(conversationId);
    if (live && !live.stopped) return local(live);
    const record = await store.conversations.get(conversationId);
    if (!record) return missing;
    let a: Active;
    try {
      a = await activate(metaOfRecord(record));
    } catch (err) {
      if (err instanceof HeldElsewhere) return remote(err.owner, record);
      throw err;
    }
    a.lastActiveAt = clock.now();
    return local(a);
  };

  /** Applies one inbox entry to the conversation's actor (this node owns it); the entry is removed with the write. */
  const applyEntry = async (a: Active, { id, event }: InboxEntry) => {
    const conversationId = a.meta.conversationId;
    const value = a.actor.getSnapshot().value;
    const at = clock.now();
    const taken = () => {
      a.inboxDone.push(id);
      void requestPersist(a).catch(() => undefined);
    };
    switch (event.type) {
      case 'customer': {
        const { messageId, text, content } = event.message;
        if (isKnownMessage(a.actor.getSnapshot().context, messageId) || (await store.history.seen(conversationId, messageId))) return taken();
        a.lastActiveAt = at;
        a.pending.push({ o: { type: 'customer', messageId, text, content }, at, inboxId: id });
        void requestPersist(a).catch(() => undefined);
        a.actor.send({ type: 'customer.message', at, messageId, text } as never);
        return;
      }
      case 'confirm': {
        const pending = (await store.conversations.get(conversationId))?.pendingConfirmation;
        taken();
        if (pending?.id === event.confirmationId)
          a.actor.send({ type: 'customer.confirm', at, confirmationId: event.confirmationId, approve: event.approve } as never);
        return;
      }
      case 'handoff':
        taken();
        if (value !== 'withHuman') a.actor.send({ type: 'handoff.request', at, ...(event.reason === undefined ? {} : { reason: event.reason }) } as never);
        return;
      case 'release':
        taken();
        if (value === 'withHuman') a.actor.send({ type: 'handoff.release', at, by: 'agent' } as never);
        return;
      case 'agent':
        taken();
        if (value === 'withHuman')
          a.actor.send({ type: 'agent.message', at, id: event.message.id, text: event.message.text, author: event.message.author } as never);
        return;
    }
  };

  const receiveHere = async (meta: ConversationMeta, message: { messageId: string; text: string; content?: object }) => {
    const accepted = await inArrivalOrder(meta.conversationId, async () => {
      // The actor remembers only its recent message ids: the store is the authority on older ones.
      if (await store.history.seen(meta.conversationId, message.messageId)) return { duplicate: true };
      const a = await activate(meta);
      a.lastActiveAt = clock.now();
      // Re-sent before the first copy is durable: the actor already has it (the same check as its guard);
      // acknowledge once the write that carries the first copy has committed.
      if (isKnownMessage(a.actor.getSnapshot().context, message.messageId)) return { duplicate: true, durable: requestPersist(a) };
      const at = clock.now();
      a.pending.push({ o: { type: 'customer', messageId: message.messageId, text: message.text, content: message.content }, at });
      const durable = requestPersist(a);
      a.actor.send({ type: 'customer.message', at, messageId: message.messageId, text: message.text } as never);
      return { duplicate: false, durable };
    });
    await accepted.durable;
    return { conversationId: meta.conversationId, duplicate: accepted.duplicate };
  };

  const host: ConversationHost = {
    async receive(customer, channel, message) {
      const meta = metaFor(customer, channel);
      for (let attempt = 1; ; attempt++) {
        try {
          return await receiveHere(meta, message);
        } catch (err) {
          if (err instanceof HeldElsewhere) {
            const event: InboxEvent = { type: 'customer', customerId: meta.customerId, channel, message };
            if (meta.externalId !== undefined) event.externalId = meta.externalId;
            await toInbox(err.owner, meta.conversationId, event);
            return { conversationId: meta.conversationId, duplicate: false };
          }
          // Taken over while this message was being written (nothing was): it goes to the new owner.
          if (isOwnershipLost(err) && attempt < 3) continue;
          throw err;
        }
      }
    },
    async confirm(conversationId, confirmationId, approve) {
      const record = await store.conversations.get(conversationId);
      if (!record || record.pendingConfirmation?.id !== confirmationId) return false;
      return onOwner(
        conversationId,
        async (a) => {
          const durable = requestPersist(a);
          a.actor.send({ type: 'customer.confirm', at: clock.now(), confirmationId, approve } as never);
          await durable;
          return true;
        },
        async (owner) => {
          await toInbox(owner, conversationId, { type: 'confirm', confirmationId, approve });
          return true;
        },
        false,
      );
    },
    handoff: (conversationId, reason) =>
      onOwner<HandoffResult>(
        conversationId,
        async (a) => {
          if (a.actor.getSnapshot().value === 'withHuman') return { ok: true, state: 'withHuman' };
          const durable = requestPersist(a);
          a.actor.send({ type: 'handoff.request', at: clock.now(), ...(reason === undefined ? {} : { reason }) } as never);
          await durable;
          return { ok: true, state: stateName(a.actor.getSnapshot().value) };
        },
        async (owner, record) => {
          await toInbox(owner, conversationId, reason === undefined ? { type: 'handoff' } : { type: 'handoff', reason });
          // Idle: the owner hands it over at once; mid-turn: when the turn ends (the state it is in now).
          return { ok: true, state: record.state === 'idle' || record.handoff ? 'withHuman' : record.state };
        },
        { ok: false, code: 'not_found' },
      ),
    release: (conversationId) =>
      onOwner<HandoffResult>(
        conversationId,
        async (a) => {
          if (a.actor.getSnapshot().value !== 'withHuman') return { ok: false, code: 'not_handed_off' };
          const durable = requestPersist(a);
          a.actor.send({ type: 'handoff.release', at: clock.now(), by: 'agent' } as never);
          await durable;
          return { ok: true, state: stateName(a.actor.getSnapshot().value) };
        },
        async (owner, record) => {
          if (!record.handoff) return { ok: false, code: 'not_handed_off' };
          await toInbox(owner, conversationId, { type: 'release' });
          return { ok: true, state: 'idle' };
        },
        { ok: false, code: 'not_found' },
      ),
    agentMessage: (conversationId, message) =>
      onOwner<HandoffResult>(
        conversationId,
        async (a) => {
          if (a.actor.getSnapshot().value !== 'withHuman') return { ok: false, code: 'not_handed_off' };
          const durable = requestPersist(a);
          a.actor.send({ type: 'agent.message', at: clock.now(), id: message.id, text: message.text, author: { name: message.author.name } } as never);
          await durable;
          return { ok: true, state: 'withHuman' };
        },
        async (owner, record) => {
          if (!record.handoff) return { ok: false, code: 'not_handed_off' };
          await toInbox(owner, conversationId, { type: 'agent', message: { id: message.id, text: message.text, author: { name: message.author.name } } });
          return { ok: true, state: 'withHuman' };
        },
        { ok: false, code: 'not_found' },
      ),
    record: (conversationId) => store.conversations.get(conversationId),
    pendingConfirmation: async (conversationId) => (await store.conversations.get(conversationId))?.pendingConfirmation,
    async resumeBusy() {
      let n = 0;
      for (const meta of await store.conversations.busy()) {
        if (active.has(meta.conversationId)) continue;
        try {
          await activate(meta);
        } catch (err) {
          if (err instanceof HeldElsewhere) continue; // its owner is alive and has it
          throw err;
        }
        n++;
      }
      if (n) log.info({ resumed: n }, 'resumed conversations that were mid-turn');
      return n;
    },
    drainInbox: (conversationId) =>
      inArrivalOrder(conversationId, async () => {
        const entries = await store.inbox.list(conversationId);
        if (!entries.length) return;
        const record = await store.conversations.get(conversationId);
        const first = entries.find((e) => e.event.type === 'customer')?.event;
        const meta = record
          ? metaOfRecord(record)
          : first?.type === 'customer'
            ? { conversationId, customerId: first.customerId, externalId: first.externalId, channel: first.channel }
            : undefined;
        if (!meta) return void log.warn({ conversationId, entries: entries.length }, 'inbox entries for a conversation that does not exist');
        let a: Active;
        try {
          a = await activate(meta);
        } catch (err) {
          // Its owner is another live node: make sure that one looks.
          if (err instanceof HeldElsewhere) return void deps.cluster?.notifyOwner(err.owner, conversationId).catch(() => undefined);
          throw err;
        }
        // Taken entries that this list no longer holds were removed before it was read: forgotten now, and only now (a
        // list read before their removal committed still holds them, and must not apply them again).
        const listed = new Set(entries.map((e) => e.id));
        for (const id of a.inboxTaken) if (!listed.has(id)) a.inboxTaken.delete(id);
        for (const entry of entries) {
          if (a.inboxTaken.has(entry.id) || a.stopped) continue;
          a.inboxTaken.add(entry.id);
          await applyEntry(a, entry);
        }
      }),
    async adopt(conversationId) {
      const record = await store.conversations.get(conversationId);
      if (record && !active.has(conversationId)) {
        try {
          await activate(metaOfRecord(record));
        } catch (err) {
          if (err instanceof HeldElsewhere) return false;
          throw err;
        }
      }
      await host.drainInbox(conversationId);
      return true;
    },
    relinquishAll() {
      leaseLosses++;
      const lost = new Error('this node lost its cluster lease');
      for (const a of [...active.values()]) {
        a.pending = [];
        a.inboxDone = [];
        a.persistRequested?.reject(lost);
        a.persistRequested = undefined;
        retire(a);
      }
    },
    async passivate(ids) {
      for (const id of ids) {
        const a = active.get(id);
        if (!a) {
          deps.lifecycle?.passivated(id);
          continue;
        }
        const quiet = () => a.actor.getSnapshot().value === 'idle' && a.pending.length === 0 && !a.writing && !a.persistRequested;
        if (!quiet()) continue;
        await requestPersist(a).catch(() => undefined);
        // A message may have arrived while the last write was in flight: it was acknowledged to this actor.
        if (a.stopped || active.get(id) !== a || !quiet()) continue;
        a.stopped = true;
        a.actor.stop();
        active.delete(id);
        deps.lifecycle?.passivated(id);
        // Given up, so that the node its next event reaches claims it (a failed release only keeps it here).
        if (a.epoch !== undefined) await deps.cluster!.ownership.release(id, a.epoch).catch(() => undefined);
      }
    },
    idleSince: (cutoff) => [...active.values()].filter((a) => a.lastActiveAt < cutoff).map((a) => a.meta.conversationId),
    activeCount: () => active.size,
    isActive: (conversationId) => active.get(conversationId)?.stopped === false,
    list: () =>
      [...active.values()].map((a) => {
        const snap = a.actor.getSnapshot();
        const ctx = snap.context as { queue?: unknown[] };
        return { conversationId: a.meta.conversationId, state: snap.value, queued: Array.isArray(ctx.queue) ? ctx.queue.length : 0 };
      }),
    async settle() {
      await Promise.all([...active.values()].map((a) => (a.persistRequested ? a.persistRequested.promise.catch(() => undefined) : undefined)));
      await store.flushed();
    },
    async stop() {
      stopping = true;
      unsubscribeRecovery();
      inDoubt.stop();
      await host.settle();
      for (const a of active.values()) {
        a.stopped = true;
        a.actor.stop();
      }
      active.clear();
    },
  };
  return host;
}

function fromPromiseLogic<I, O>(fn: (input: I) => Promise<O>) {
  return fromPromise<O, I>(({ input }) => fn(input));
}
