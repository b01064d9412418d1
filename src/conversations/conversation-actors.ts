// The conversation actors: one provided machine for every conversation, an actor started from a stored snapshot with
// its write loop, its outputs (XState `emit`) queued for that loop, and what happens when a conversation cannot go on
// here: fenced (another node owns it), its turn abandoned (it cannot be stored), deactivated (still failing).
import { createActor, fromPromise, type Snapshot } from 'xstate';
import {
  abandonedTurnOutputs,
  conversationMachine,
  type ConversationOutput,
  type InvokeOutcome,
  type InvokeToolInput,
  type LlmStepInput,
  type LlmStepOutput,
  type Timed,
} from '../../machines/conversation.ts';
import { xstateClock } from '../clock.ts';
import type { ConversationMeta } from '../store/model.ts';
import { publish, writeBatch } from './conversation-write.ts';
import type { ReplyDelta } from './reply-stream.ts';
import type { Active, Runtime } from './runtime.ts';
import { allMayWait, QUIET_OUTPUT_WAIT_MS } from './quiet-outputs.ts';
import { awaitTools } from './tools-ready.ts';
import { WriteLoop, type HandedOver } from './write-loop.ts';

/** A conversation dropped after repeated write failures is brought back from its last stored state after this. */
const REACTIVATE_AFTER_MS = 60_000;

export type ConversationLogic = ReturnType<typeof conversationLogic>;

/**
 * One provided machine for every conversation (providing per actor would copy the machine definition into each one);
 * its invoked steps find their conversation by the id in their input.
 */
export function conversationLogic(rt: Runtime) {
  return conversationMachine.provide({
    actors: {
      llm: fromPromise<Timed<LlmStepOutput>, LlmStepInput>(async ({ input, signal }) => {
        const a = rt.active.get(input.conversationId);
        if (a) await awaitTools(rt, a, input, signal, () => onOutput(rt, a, { type: 'typing', on: true }));
        const streams = a !== undefined && rt.deps.sinks[a.meta.channel]?.stream !== undefined;
        return rt.deps.llmStep(input, { signal, onDelta: streams ? (delta) => streamLive(rt, input.conversationId, delta, signal) : undefined });
      }),
      invokeTool: fromPromise<Timed<InvokeOutcome>, InvokeToolInput>(({ input }) => invokeTool(rt, input)),
    },
  });
}

/** The reply's text as it is written: straight to the channel, like `typing`; nothing once the step was stopped. */
function streamLive(rt: Runtime, conversationId: string, delta: ReplyDelta, signal: AbortSignal): void {
  const a = rt.active.get(conversationId);
  if (!a || signal.aborted || (rt.deps.cluster && !rt.deps.cluster.holdsLease())) return;
  try {
    rt.deps.sinks[a.meta.channel]?.stream?.(a.meta, delta);
  } catch {
    /* live only */
  }
}

function invokeTool(rt: Runtime, input: InvokeToolInput): Promise<Timed<InvokeOutcome>> {
  const { clock } = rt.deps.services;
  const a = rt.active.get(input.conversationId);
  if (!a) return Promise.resolve({ ok: false, error: { message: 'conversation is not active', code: 'inactive' }, at: clock.now() });
  const call = a.resumeUntil === undefined ? rt.deps.invokeTool(input, a.meta) : invokeOnceBack(rt, a, input);
  return call.then(
    (outcome): Timed<InvokeOutcome> => Object.assign({}, outcome, { at: clock.now() }),
    (err: unknown): Timed<InvokeOutcome> => ({ ok: false, error: { message: String((err as Error)?.message ?? err) }, at: clock.now() }),
  );
}

/**
 * A turn resumed after a restart usually runs before the SDK has reconnected: its call (same invocationId) waits for
 * the function to be registered again, up to the invoke timeout, instead of failing as unknown at once.
 */
async function invokeOnceBack(rt: Runtime, a: Active, input: InvokeToolInput): Promise<InvokeOutcome> {
  const { clock } = rt.deps.services;
  for (;;) {
    const outcome = await rt.deps.invokeTool(input, a.meta);
    if (outcome.ok || outcome.error.code !== 'unknown_function' || a.writes.final || clock.now() >= (a.resumeUntil ?? 0)) return outcome;
    await new Promise<void>((resolve) => clock.setTimeout(() => resolve(), 200));
  }
}

/** An output of the actor (its `emit`): `typing` live at once, anything else queued for the next write. */
function onOutput(rt: Runtime, a: Active, o: ConversationOutput): void {
  if (o.type === 'typing') {
    if (rt.deps.cluster && !rt.deps.cluster.holdsLease()) return;
    try {
      rt.deps.sinks[a.meta.channel]?.deliver?.(a.meta, o);
    } catch {
      /* live only */
    }
    return;
  }
  // The turn resumed after a restart is over: later calls to an unknown function fail at once.
  if (o.type === 'turn' && o.phase === 'ended') a.resumeUntil = undefined;
  a.writes.add({ o, at: rt.deps.services.clock.now() });
  askToWrite(rt, a);
}

/**
 * After an output or a change of state: written now, or (`conversation.defer_read_call_records`) with the turn's next
 * write when all that waits may wait.
 */
function askToWrite(rt: Runtime, a: Active): void {
  const defer = rt.deps.services.config.conversation.defer_read_call_records;
  if (defer && allMayWait(a.writes.waiting, a.actor.getSnapshot().context)) a.writes.requestWriteWithin(QUIET_OUTPUT_WAIT_MS);
  else void a.writes.requestWrite().catch(() => undefined);
}

function writeLoopOf(rt: Runtime, logic: ConversationLogic, a: Active): WriteLoop {
  const { clock, telemetry } = rt.deps.services;
  const conversationId = a.meta.conversationId;
  return new WriteLoop({
    clock,
    write: (batch, inboxDone, prepared) => writeBatch(rt, a, batch, inboxDone, prepared),
    publish: (written) => publish(rt, a.meta, written),
    hostStopping: rt.stopping,
    fenced: (err) => {
      rt.log.warn({ conversationId, epoch: a.epoch, cause: err.message }, 'conversation taken over by another node: its actor here stops');
      retire(rt, a);
    },
    inDoubt: (batch, prepared) => rt.inDoubt(a.meta, batch, prepared),
    waitsForStore: (err) => rt.log.warn({ conversationId, cause: err.code }, 'conversation write waits for the store'),
    failed: (err, attempt) => {
      rt.log.error({ err, conversationId, attempt }, 'conversation write failed');
      telemetry.event({ type: 'error', conversationId, data: { where: 'conversation.persist', message: (err as Error).message, attempt } });
    },
    abandoned: (handed) => abandonTurn(rt, logic, a, handed),
    deactivated: (dropped) => deactivate(rt, a, dropped),
    logError: (err, where) => rt.log.warn({ err }, where),
  });
}

/** Starts the conversation's actor from `saved` (its snapshot; none: a new conversation), unless one is live. */
export function startActor(
  rt: Runtime,
  logic: ConversationLogic,
  meta: ConversationMeta,
  saved: { snapshot?: unknown; busy?: boolean } | undefined,
  epoch: number | undefined,
  written: Active['written'],
): Active {
  const existing = rt.active.get(meta.conversationId);
  if (existing && !existing.writes.final) return existing;
  const { clock, config } = rt.deps.services;
  const a = { meta, lastActiveAt: clock.now(), epoch, inboxTaken: new Set<number>(), written } as Active;
  a.writes = writeLoopOf(rt, logic, a);
  if (saved?.busy) a.resumeUntil = clock.now() + config.safety.invoke_timeout_ms;
  const input = {
    conversationId: meta.conversationId,
    customerId: meta.customerId,
    channel: meta.channel,
    maxToolSteps: config.llm.max_tool_steps,
    confirmationTimeoutMs: config.safety.confirmation_timeout_seconds * 1000,
    offlineAfterMs: config.handoff.offline_after_minutes * 60_000,
    ...(config.handoff.return_to_assistant_after_minutes === undefined ? {} : { returnAfterMs: config.handoff.return_to_assistant_after_minutes * 60_000 }),
    gatherMs: config.conversation.gather_ms[meta.channel],
    bursts: config.conversation.bursts,
  };
  // Settings live in context; a snapshot keeps the ones it was made with (or none, from before they existed).
  const snapshot = saved?.snapshot as (Snapshot<unknown> & { context?: Record<string, unknown> }) | undefined;
  if (snapshot?.context)
    Object.assign(snapshot.context, {
      offlineAfterMs: input.offlineAfterMs,
      returnAfterMs: input.returnAfterMs,
      gatherMs: input.gatherMs,
      bursts: input.bursts,
    });
  a.actor = createActor(logic, { input, snapshot, clock: xstateClock(clock) });
  a.actor.on('*', (o) => onOutput(rt, a, o));
  a.actor.subscribe({
    next: () => {
      a.lastActiveAt = clock.now();
      askToWrite(rt, a);
    },
    error: (err) => actorFailed(rt, a, err),
  });
  rt.active.set(meta.conversationId, a);
  a.actor.start();
  rt.deps.lifecycle?.activated(meta, a.actor);
  if (saved?.snapshot) a.actor.send({ type: 'restored', at: clock.now() });
  return a;
}

function actorFailed(rt: Runtime, a: Active, err: unknown): void {
  const { conversationId, customerId } = a.meta;
  rt.log.error({ err, conversationId }, 'conversation actor failed');
  rt.deps.services.telemetry.event({ type: 'error', conversationId, customerId, data: { where: 'conversation.actor', message: (err as Error)?.message } });
  // Not from inside the actor's own notification.
  queueMicrotask(() => {
    if (a.writes.final || rt.stopping()) return;
    try {
      a.writes.abandon();
    } catch (e) {
      rt.log.error({ err: e, conversationId }, 'conversation could not be recovered');
      deactivate(rt, a, a.writes.queued);
    }
  });
}

/** The actor stops and leaves the host (its write loop, unless already final, with it). */
export function retire(rt: Runtime, a: Active): void {
  if (!a.writes.final) a.writes.stop();
  a.actor.stop();
  if (rt.active.get(a.meta.conversationId) === a) rt.active.delete(a.meta.conversationId);
  rt.deps.lifecycle?.passivated(a.meta.conversationId);
}

/**
 * The actor's writes keep failing, or the actor itself failed: replace it with an idle one that keeps its queue and
 * the messages it has seen, drop the current turn's unwritten outputs, and answer that turn with the apology. Later
 * messages are answered as usual.
 */
function abandonTurn(rt: Runtime, logic: ConversationLogic, a: Active, handed: HandedOver): void {
  const context = a.actor.getSnapshot().context;
  const turn = context.turn;
  const kept = handed.pending.filter((e) => !(turn && 'turnId' in e.o && e.o.turnId === turn.turnId && e.o.type !== 'turn'));
  rt.log.error(
    { conversationId: a.meta.conversationId, turnId: turn?.turnId, dropped: handed.pending.length - kept.length },
    'conversation turn abandoned: it could not be stored',
  );
  retire(rt, a);
  const idle = logic.getPersistedSnapshot(logic.resolveState({ value: 'idle', context: Object.assign({}, context, { turn: undefined }) }));
  const fresh = startActor(rt, logic, a.meta, { snapshot: idle, busy: false }, a.epoch, a.written);
  fresh.inboxTaken = a.inboxTaken;
  const at = rt.deps.services.clock.now();
  const apology = abandonedTurnOutputs(turn).map((o) => ({ o, at }));
  void fresh.writes.adopt(Object.assign({}, handed, { pending: [...kept, ...apology] })).catch(() => undefined);
}

/** Still failing after the turn was abandoned: stop retrying. The next message resumes from the last stored state. */
function deactivate(rt: Runtime, a: Active, dropped: number): void {
  rt.log.error({ conversationId: a.meta.conversationId, dropped }, 'conversation deactivated after repeated write failures');
  retire(rt, a);
  // What it acknowledged is in its last stored state (messages are acknowledged only once stored): bring it back from
  // there later, so those messages are answered even if the customer writes nothing more.
  rt.resting.set(a.meta.conversationId, rt.deps.services.clock.now() + REACTIVATE_AFTER_MS);
  rt.deps.services.clock.setTimeout(() => {
    if (!rt.stopping() && !rt.active.has(a.meta.conversationId))
      void rt.activate(a.meta).catch((err) => rt.log.warn({ err }, 'conversation could not be brought back'));
  }, REACTIVATE_AFTER_MS);
}
