// The services one Parley process is made of. `createParley` (src/app.ts)
// builds them once and hands them to every plugin; nothing is module-global.
import type { Clock } from './clock.ts';
import type { Config } from './config/schema.ts';
import type { Logger } from './logger.ts';
import type { Store } from './store/repos.ts';
import type { TelemetryEvent, TurnCallRecord } from './store/telemetry-records.ts';
import type { FunctionDeclaration, InvokeContextInput, ServerFrame } from '../sdk/src/protocol.ts';

export interface Paths {
  config: string;
  storage: string;
  public: string;
}

/** One registered SDK function in the catalog (union of all registered connections). */
export interface CatalogEntry extends Omit<FunctionDeclaration, 'summarizes'> {
  /** See FunctionDeclaration (absent: false; MCP tools never do). */
  summarizes?: boolean;
  connectionId: string;
}

/** `receipt`: what the customer reads once a confirmed action ran, when the backend worded it (`result.receipt`). */
export type InvokeOutcome = { ok: true; data: unknown; receipt?: string } | { ok: false; error: { message: string; code?: string }; receipt?: string };

export interface SdkHub {
  /** Functions callable now. A name registered by two connections resolves to the most recent registration. */
  catalog(): CatalogEntry[];
  connectionCount(): number;
  registeredCount(): number;
  /**
   * Calls a function on the SDK that registered it. `invocationId` is the
   * idempotency key handed to the handler; pass the same one on retries.
   * Never rejects: failures (unknown function, timeout, disconnect, handler error) come back as `ok:false`
   * with code `unknown_function` | `timeout` | `disconnected` | the handler's code.
   */
  invoke(name: string, args: unknown, context: InvokeContextInput, options?: { invocationId?: string; timeoutMs?: number }): Promise<InvokeOutcome>;
  /**
   * A `summarizes` function's confirmation summary, asked of the backend that registered it (a `summarize` frame).
   * Resolves undefined when it has none, does not answer within `timeoutMs`, or is not on this node. Never rejects.
   */
  summarize?(name: string, args: unknown, locale: string, timeoutMs: number): Promise<string | undefined>;
  /** True when a registered connection declared `sendProvider`. */
  canSend(): boolean;
  /** Deliver an outbound message through an SDK `onSend` handler (provider `sdk`). */
  send(
    message: { id: string; channel: 'web' | 'whatsapp'; to: string; content: string },
    timeoutMs?: number,
  ): Promise<{ ok: boolean; messageId?: string; error?: string }>;
  /** Sends a live notice to every registered SDK connection (human handoff); returns how many got it. */
  broadcast(frame: Extract<ServerFrame, { type: 'handoff' | 'customer_message' }>): number;
  /** Listen for catalog changes (register / close). */
  onChange(listener: () => void): () => void;
}

export type NewEvent = Omit<TelemetryEvent, 'id' | 'at' | 'data'> & { data?: Record<string, unknown>; at?: number };
export type NewTurnCall = Omit<TurnCallRecord, 'id' | 'at' | 'cost'> & { at?: number };

/** The telemetry recorder (src/telemetry/recorder.ts makes it). */
export interface Telemetry {
  /** Record a fact. Never throws, never waits: writes are batched off the hot path. */
  event(e: NewEvent): void;
  turnCall(r: NewTurnCall): void;
  /** Called synchronously for each recorded event/turn call (metrics, live views). */
  subscribe(listener: { event?(e: TelemetryEvent): void; turnCall?(r: TurnCallRecord): void }): () => void;
  /** Persist records or not from now on (listeners are called either way); the cost benchmark compares both in one process. */
  setPersisting?(on: boolean): void;
  /** Resolves once everything recorded so far is durable. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface Services {
  config: Config;
  clock: Clock;
  store: Store;
  logger: Logger;
  telemetry: Telemetry;
  /** The service secret (never log it). */
  secret: string;
  paths: Paths;
  version: string;
  testMode: boolean;
}
