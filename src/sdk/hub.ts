// The SDK hub: the function catalog (union of every registered connection),
// SDK invokes and outbound `send`s with their pending replies, and the
// connection transports. Implements `SdkHub` (src/services.ts).
//
// Duplicate names: a name offered by several connections resolves to the most
// recent registration; when that connection closes, the name falls back to the
// next most recent connection still offering it.
import { randomUUID } from 'node:crypto';
import type { AckFrame, IngestFrame, InvokeContextInput, ResultFrame, SentFrame, ServerFrame } from '../../sdk/src/protocol.ts';
import type { CatalogEntry, InvokeOutcome, SdkHub, Services } from '../services.ts';
import type { TimerHandle } from '../clock.ts';
import type { SdkConnectionEffectHandlers, SupervisorRuntime } from '../runtime/supervisor.ts';
import type { SdkFunctionDeclaration, SdkInfo } from '../../machines/sdkConnection.ts';
import { isStoreUnavailable } from '../store/errors.ts';

/** How the hub reaches one socket (the gateway supplies it). */
export interface SdkTransport {
  send(frame: ServerFrame): void;
  close(code: number, reason: string): void;
}

export type IngestHandler = (frame: IngestFrame, connectionId: string) => Promise<{ ok: boolean; error?: string }>;

export interface SdkConnectionInfo {
  connectionId: string;
  registered: boolean;
  functions: string[];
  sendProvider: boolean;
  sdk: SdkInfo | null;
}

export interface SdkHubRuntime extends SdkHub {
  /** The socket of a reserved connection is up. */
  attach(connectionId: string, transport: SdkTransport): void;
  /** The socket closed: pending calls on it fail with `disconnected`, its slot and catalog go. */
  detach(connectionId: string, code?: number): void;
  /** A `result` frame from a connection. */
  handleResult(connectionId: string, frame: ResultFrame): void;
  /** A `sent` frame from a connection. */
  handleSent(connectionId: string, frame: SentFrame): void;
  /** Answers an `ingest` frame with the handler set by `setIngestHandler` (default: not enabled). */
  ingest(frame: IngestFrame, connectionId: string): Promise<Omit<AckFrame, 'type' | 'id'>>;
  setIngestHandler(handler: IngestHandler | undefined): void;
  connections(): SdkConnectionInfo[];
}

interface Registration {
  seq: number;
  functions: SdkFunctionDeclaration[];
  sendProvider: boolean;
  sdk: SdkInfo | null;
}

interface Pending<T> {
  connectionId: string;
  timer: TimerHandle;
  resolve: (v: T) => void;
  promise: Promise<T>;
}

const DEFAULT_INVOKE_TIMEOUT_MS = 10_000;
const DEFAULT_SEND_TIMEOUT_MS = 15_000;

export function createSdkHub(o: { services: Services; supervisor: SupervisorRuntime }): SdkHubRuntime {
  const { services, supervisor } = o;
  const { clock, telemetry } = services;
  const log = services.logger.child({ component: 'sdk-hub' });
  const invokeTimeoutMs = services.config?.safety?.invoke_timeout_ms ?? DEFAULT_INVOKE_TIMEOUT_MS;

  const transports = new Map<string, SdkTransport>();
  const registrations = new Map<string, Registration>();
  const pendingInvokes = new Map<string, Pending<InvokeOutcome>>();
  const pendingSends = new Map<string, Pending<{ ok: boolean; messageId?: string; error?: string }>>();
  const listeners = new Set<() => void>();
  let seq = 0;
  let ingestHandler: IngestHandler | undefined;
  let index: Map<string, CatalogEntry> | undefined; // cached, rebuilt on change

  const catalogIndex = () => {
    if (index) return index;
    index = new Map();
    const bySeq = [...registrations.entries()].sort((a, b) => a[1].seq - b[1].seq);
    for (const [connectionId, r] of bySeq)
      for (const f of r.functions) index.set(f.name, Object.assign({}, f, { visitors: f.visitors ?? false, connectionId }));
    return index;
  };

  const changed = () => {
    index = undefined;
    for (const l of listeners) {
      try {
        l();
      } catch (err) {
        log.error({ err }, 'catalog listener failed');
      }
    }
  };

  const unpublish = (connectionId: string) => {
    if (registrations.delete(connectionId)) changed();
  };

  const settleAll = <T>(pending: Map<string, Pending<T>>, connectionId: string, value: T) => {
    for (const [id, p] of pending) {
      if (p.connectionId !== connectionId) continue;
      clock.clearTimeout(p.timer);
      pending.delete(id);
      p.resolve(value);
    }
  };

  const track = <T>(pending: Map<string, Pending<T>>, id: string, connectionId: string, timeoutMs: number, onTimeout: T): Pending<T> => {
    let resolve!: (v: T) => void;
    const promise = new Promise<T>((r) => (resolve = r));
    const p: Pending<T> = {
      connectionId,
      promise,
      resolve,
      timer: clock.setTimeout(() => {
        if (pending.get(id) !== p) return;
        pending.delete(id);
        resolve(onTimeout);
      }, timeoutMs),
    };
    pending.set(id, p);
    return p;
  };

  const effects: SdkConnectionEffectHandlers = {
    replyRegistered({ connectionId, functions }) {
      transports.get(connectionId)?.send({ type: 'registered', functions });
    },
    publishCatalog({ connectionId, functions, sendProvider, sdk }) {
      registrations.set(connectionId, { seq: ++seq, functions, sendProvider, sdk });
      changed();
      telemetry.event({
        type: 'sdk.registered',
        data: { connectionId, functions: functions.length, names: functions.map((f) => f.name), sendProvider, sdk },
      });
      log.info({ connectionId, functions: functions.length, sdk }, 'SDK registered');
    },
    unpublishCatalog({ connectionId }) {
      unpublish(connectionId);
    },
    closeSocket({ connectionId, code, reason }) {
      const t = transports.get(connectionId);
      if (t) t.close(code, reason);
      // Reserved but never attached (the upgrade did not happen): just free the slot.
      else queueMicrotask(() => supervisor.releaseSdkSlot(connectionId, code));
    },
    rejectRegister({ connectionId, reason }) {
      transports.get(connectionId)?.send({ type: 'error', code: 'bad_register', message: `register refused: ${reason}` });
    },
    connectionFailed(connectionId) {
      unpublish(connectionId);
      transports.get(connectionId)?.close(1011, 'internal error');
    },
  };
  supervisor.useSdkEffects(effects);

  const sendTo = (connectionId: string, frame: ServerFrame): boolean => {
    const t = transports.get(connectionId);
    if (!t) return false;
    try {
      t.send(frame);
      return true;
    } catch (err) {
      log.warn({ err, connectionId }, 'SDK frame could not be sent');
      return false;
    }
  };

  const sendProvider = (): string | undefined => {
    let best: [string, number] | undefined;
    for (const [id, r] of registrations) if (r.sendProvider && transports.has(id) && (!best || r.seq > best[1])) best = [id, r.seq];
    return best?.[0];
  };

  return {
    catalog: () => [...catalogIndex().values()],
    connectionCount: () => transports.size,
    registeredCount: () => registrations.size,

    invoke(name: string, args: unknown, context: InvokeContextInput, options: { invocationId?: string; timeoutMs?: number } = {}): Promise<InvokeOutcome> {
      const entry = catalogIndex().get(name);
      if (!entry) return Promise.resolve({ ok: false, error: { code: 'unknown_function', message: `No SDK function named "${name}" is registered` } });
      const id = options.invocationId ?? randomUUID();
      // A retry with the same idempotency key while the first call is in flight joins it.
      const inFlight = pendingInvokes.get(id);
      if (inFlight) return inFlight.promise;
      const p = track<InvokeOutcome>(pendingInvokes, id, entry.connectionId, options.timeoutMs ?? invokeTimeoutMs, {
        ok: false,
        error: { code: 'timeout', message: `The SDK function "${name}" did not answer in time` },
      });
      const frame: ServerFrame = { type: 'invoke', id, name, args: args ?? {}, context: Object.assign({}, context, { verified: context.verified ?? false }) };
      if (!sendTo(entry.connectionId, frame)) {
        clock.clearTimeout(p.timer);
        pendingInvokes.delete(id);
        return Promise.resolve({ ok: false, error: { code: 'disconnected', message: 'The SDK connection is gone' } });
      }
      return p.promise;
    },

    canSend: () => sendProvider() !== undefined,

    send(message, timeoutMs = DEFAULT_SEND_TIMEOUT_MS) {
      const connectionId = sendProvider();
      if (!connectionId) return Promise.resolve({ ok: false, error: 'No SDK connection handles onSend' });
      const inFlight = pendingSends.get(message.id);
      if (inFlight) return inFlight.promise;
      const p = track(pendingSends, message.id, connectionId, timeoutMs, { ok: false, error: 'timeout' });
      if (!sendTo(connectionId, { type: 'send', ...message })) {
        clock.clearTimeout(p.timer);
        pendingSends.delete(message.id);
        return Promise.resolve({ ok: false, error: 'disconnected' });
      }
      return p.promise;
    },

    broadcast(frame) {
      let n = 0;
      for (const id of registrations.keys()) if (sendTo(id, frame)) n++;
      return n;
    },

    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    attach(connectionId, transport) {
      transports.set(connectionId, transport);
      telemetry.event({ type: 'sdk.connected', data: { connectionId } });
    },

    detach(connectionId, code) {
      if (!transports.delete(connectionId)) return;
      settleAll(pendingInvokes, connectionId, { ok: false, error: { code: 'disconnected', message: 'The SDK connection closed before answering' } });
      settleAll(pendingSends, connectionId, { ok: false, error: 'disconnected' });
      supervisor.releaseSdkSlot(connectionId, code); // → socket.closed → unpublishCatalog
      unpublish(connectionId); // in case the connection actor is already gone
      telemetry.event({ type: 'sdk.closed', data: { connectionId, code: code ?? null } });
      log.info({ connectionId, code }, 'SDK connection closed');
    },

    handleResult(connectionId, frame) {
      const p = pendingInvokes.get(frame.id);
      if (!p || p.connectionId !== connectionId) return void log.debug({ connectionId, id: frame.id }, 'result for no pending invoke');
      clock.clearTimeout(p.timer);
      pendingInvokes.delete(frame.id);
      p.resolve(frame.ok ? { ok: true, data: frame.data ?? null } : { ok: false, error: frame.error });
    },

    handleSent(connectionId, frame) {
      const p = pendingSends.get(frame.id);
      if (!p || p.connectionId !== connectionId) return void log.debug({ connectionId, id: frame.id }, 'sent for no pending send');
      clock.clearTimeout(p.timer);
      pendingSends.delete(frame.id);
      p.resolve({ ok: frame.ok, ...(frame.messageId ? { messageId: frame.messageId } : {}), ...(frame.error ? { error: frame.error } : {}) });
    },

    async ingest(frame, connectionId) {
      if (!ingestHandler) return { ok: false, error: 'ingest is not enabled' };
      try {
        const r = await ingestHandler(frame, connectionId);
        return { ok: r.ok, ...(r.error ? { error: r.error } : {}) };
      } catch (err) {
        // A store that cannot write (a full disk, PostgreSQL away) is the environment, not a bug: no stack; sent again later.
        if (isStoreUnavailable(err)) {
          log.warn({ connectionId, code: err.code }, 'ingest not stored: the store cannot write');
          return { ok: false, error: `unavailable: Parley cannot store this now (${err.code}); send it again` };
        }
        log.error({ err, connectionId }, 'ingest handler failed');
        return { ok: false, error: 'ingest failed' };
      }
    },

    setIngestHandler(handler) {
      ingestHandler = handler;
    },

    connections() {
      return [...transports.keys()].map((connectionId) => {
        const r = registrations.get(connectionId);
        return {
          connectionId,
          registered: !!r,
          functions: r?.functions.map((f) => f.name) ?? [],
          sendProvider: r?.sendProvider ?? false,
          sdk: r?.sdk ?? null,
        };
      });
    },
  };
}
