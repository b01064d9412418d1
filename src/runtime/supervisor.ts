// The root actor of the process (machines/supervisor.ts) with its effects
// wired in, plus the registry diagnostics read. SDK connection children get
// their socket/catalog effects from the SDK hub (`useSdkEffects`), which is
// created after the supervisor.
import { randomUUID } from 'node:crypto';
import { createActor, type Actor, type ActorRefFrom, type AnyActorRef, type InspectionEvent } from 'xstate';
import { supervisorMachine } from '../../machines/supervisor.ts';
import { sdkConnectionMachine, type SdkConnectionEffects } from '../../machines/sdkConnection.ts';
import { xstateClock, type Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Telemetry } from '../services.ts';

/** One live actor as /diagnostics lists it. */
export interface LiveActor {
  id: string;
  machine: string;
  state: unknown;
  context: Record<string, unknown>;
}

export type SdkConnectionRef = ActorRefFrom<typeof sdkConnectionMachine>;

/** What the SDK connection actors do to the outside world (implemented by the SDK hub). */
export interface SdkConnectionEffectHandlers {
  replyRegistered(p: SdkConnectionEffects['replyRegistered']): void;
  publishCatalog(p: SdkConnectionEffects['publishCatalog']): void;
  unpublishCatalog(p: SdkConnectionEffects['unpublishCatalog']): void;
  closeSocket(p: SdkConnectionEffects['closeSocket']): void;
  rejectRegister(p: SdkConnectionEffects['rejectRegister']): void;
  /** The connection's actor failed: its catalog must go and its socket should close. */
  connectionFailed(connectionId: string, error: unknown): void;
}

export interface SupervisorRuntimeOptions {
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  maxSdkConnections?: number;
  idleMs: number;
  /** The supervisor's decision on `tick`: passivate the conversations with no activity since `idleBefore`. */
  passivate: (idleBefore: number) => void | Promise<void>;
}

export interface SupervisorRuntime {
  actor: Actor<typeof supervisorMachine>;
  /** Free SDK connection slots right now. */
  sdkSlotsAvailable(): number;
  /** Synchronously takes a slot (spawns the connection actor); undefined when the limit is reached. */
  reserveSdkSlot(connectionId?: string): string | undefined;
  /** Frees the slot: the connection actor receives `socket.closed`. Idempotent. */
  releaseSdkSlot(connectionId: string, code?: number): void;
  /** The live actor of one SDK connection (frames go straight to it, not through the supervisor). */
  sdkConnection(connectionId: string): SdkConnectionRef | undefined;
  useSdkEffects(handlers: SdkConnectionEffectHandlers): void;
  /** Root actors that live outside the supervisor (e.g. the daemon), listed by diagnostics. */
  register(id: string, machine: string, actorRef: AnyActorRef): void;
  unregister(id: string): void;
  /** The conversation host activated / passivated a conversation (lifecycle only, never per message). */
  conversationActivated(id: string, actorRef: AnyActorRef): void;
  conversationPassivated(id: string): void;
  /** The periodic tick: the supervisor decides whether idle conversations are passivated. */
  tick(): void;
  liveActors(): LiveActor[];
  stop(): void;
}

const noEffects: SdkConnectionEffectHandlers = {
  replyRegistered() {},
  publishCatalog() {},
  unpublishCatalog() {},
  closeSocket() {},
  rejectRegister() {},
  connectionFailed() {},
};

/** Context in diagnostics: primitives as they are, long strings cut, collections summarised by size. */
export function summarizeContext(context: unknown): Record<string, unknown> {
  if (!context || typeof context !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(context as Record<string, unknown>)) {
    if (v === null || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    else if (typeof v === 'string') out[k] = v.length > 200 ? `${v.slice(0, 200)}…` : v;
    else if (Array.isArray(v)) out[k] = { length: v.length };
    else if (typeof v === 'object') out[k] = { keys: Object.keys(v as object).length };
  }
  return out;
}

export function createSupervisorRuntime(o: SupervisorRuntimeOptions): SupervisorRuntime {
  const { clock, telemetry } = o;
  const log = o.logger.child({ component: 'supervisor' });
  const maxSdkConnections = o.maxSdkConnections ?? 32;
  let sdk: SdkConnectionEffectHandlers = noEffects;
  const external = new Map<string, { machine: string; ref: AnyActorRef }>();
  let eventsProcessed = 0;

  // An effect that throws must not fail the actor that runs it (a failing
  // supervisor would take every SDK connection down with it).
  const safely =
    <P>(name: string, fn: (p: P) => void) =>
    (_: unknown, p: P) => {
      try {
        fn(p);
      } catch (err) {
        log.error({ err, effect: name }, 'supervisor effect failed');
      }
    };

  const connectionMachine = sdkConnectionMachine.provide({
    actions: {
      replyRegistered: safely('replyRegistered', (p: SdkConnectionEffects['replyRegistered']) => sdk.replyRegistered(p)),
      publishCatalog: safely('publishCatalog', (p: SdkConnectionEffects['publishCatalog']) => sdk.publishCatalog(p)),
      unpublishCatalog: safely('unpublishCatalog', (p: SdkConnectionEffects['unpublishCatalog']) => sdk.unpublishCatalog(p)),
      closeSocket: safely('closeSocket', (p: SdkConnectionEffects['closeSocket']) => sdk.closeSocket(p)),
      rejectRegister: safely('rejectRegister', (p: SdkConnectionEffects['rejectRegister']) => sdk.rejectRegister(p)),
    },
  });

  const machine = supervisorMachine.provide({
    actors: { sdkConnection: connectionMachine },
    actions: {
      passivate: safely('passivate', (p: { idleBefore: number }) => {
        const done = o.passivate(p.idleBefore);
        if (done) done.catch((err: unknown) => log.error({ err }, 'passivation failed'));
      }),
      sdkRefused: safely('sdkRefused', (p: { connectionId: string; limit: number }) =>
        log.warn({ connectionId: p.connectionId, limit: p.limit }, 'SDK connection refused: connection limit reached'),
      ),
      childFailed: safely('childFailed', (p: { childId: string; error: unknown }) => {
        log.error({ err: p.error, childId: p.childId }, 'supervised actor failed');
        telemetry.event({ type: 'supervisor.child_failed', data: { childId: p.childId, message: String((p.error as Error)?.message ?? p.error) } });
        sdk.connectionFailed(p.childId, p.error);
      }),
    },
  });

  const inspect = (e: InspectionEvent) => {
    if (e.type === '@xstate.event') eventsProcessed++;
  };

  const actor = createActor(machine, { clock: xstateClock(clock), inspect, input: { maxSdkConnections, idleMs: o.idleMs } });
  actor.subscribe({
    error: (err) => {
      log.fatal({ err }, 'supervisor failed');
      telemetry.event({ type: 'supervisor.failed', data: { message: String((err as Error)?.message ?? err) } });
    },
  });
  actor.start();

  const running = () => actor.getSnapshot().status === 'active';
  const slotsUsed = () => Object.keys(actor.getSnapshot().context.sdkConnections).length;

  return {
    actor,
    sdkSlotsAvailable: () => Math.max(0, maxSdkConnections - slotsUsed()),
    reserveSdkSlot(connectionId = randomUUID()) {
      if (actor.getSnapshot().status !== 'active') return undefined; // shutting down
      actor.send({ type: 'sdk.connected', connectionId, at: clock.now() });
      return connectionId in actor.getSnapshot().context.sdkConnections ? connectionId : undefined;
    },
    releaseSdkSlot(connectionId, code) {
      // After shutdown the supervisor is stopped; sockets still closing have nothing to release.
      const snap = actor.getSnapshot();
      if (snap.status !== 'active' || !(connectionId in snap.context.sdkConnections)) return;
      actor.send({ type: 'sdk.closed', connectionId, code });
    },
    sdkConnection: (connectionId) => actor.getSnapshot().children[connectionId] as SdkConnectionRef | undefined,
    useSdkEffects(handlers) {
      sdk = handlers;
    },
    register(id, machineName, ref) {
      external.set(id, { machine: machineName, ref });
    },
    unregister(id) {
      external.delete(id);
    },
    conversationActivated(id, ref) {
      const known = external.has(id);
      external.set(id, { machine: 'conversation', ref });
      if (!known && running()) actor.send({ type: 'conversation.activated', conversationId: id });
    },
    conversationPassivated(id) {
      // The host may report an id it no longer holds; only a known one changes the count.
      if (!external.delete(id)) return;
      if (running()) actor.send({ type: 'conversation.passivated', conversationId: id });
    },
    tick() {
      if (running()) actor.send({ type: 'tick', at: clock.now() });
    },
    liveActors() {
      const snap = actor.getSnapshot();
      const list: LiveActor[] = [
        {
          id: 'supervisor',
          machine: 'supervisor',
          state: snap.value,
          context: {
            status: snap.status,
            maxSdkConnections: snap.context.maxSdkConnections,
            sdkConnections: Object.keys(snap.context.sdkConnections).length,
            conversations: snap.context.conversations,
            idleMs: snap.context.idleMs,
            refusedSdkConnections: snap.context.refusedSdkConnections,
            failedChildren: snap.context.failedChildren,
            eventsProcessed,
          },
        },
      ];
      for (const [id, ref] of Object.entries(snap.children)) {
        if (!ref) continue;
        const s = (ref as SdkConnectionRef).getSnapshot();
        list.push({
          id,
          machine: 'sdkConnection',
          state: s.value,
          context: {
            connectionId: s.context.connectionId,
            connectedAt: s.context.connectedAt,
            registeredAt: s.context.registeredAt,
            sdk: s.context.sdk,
            sendProvider: s.context.sendProvider,
            functions: s.context.functions.map((f) => f.name),
          },
        });
      }
      for (const [id, { machine: machineName, ref }] of external) {
        const s = ref.getSnapshot() as { value?: unknown; status?: string; context?: unknown };
        list.push({ id, machine: machineName, state: s.value ?? s.status, context: summarizeContext(s.context) });
      }
      return list;
    },
    stop() {
      actor.stop();
      external.clear();
    },
  };
}
