// The services one Parley process is made of. `createParley` (src/app.ts)
// builds them once and hands them to every plugin; nothing is module-global.
import type { Clock } from './clock.ts';
import type { Config } from './config/schema.ts';
import type { Logger } from './logger.ts';
import type { Store } from './store/repos.ts';
import type { Telemetry } from './telemetry/types.ts';
import type { FunctionDeclaration, InvokeContextInput, ServerFrame } from '../sdk/src/protocol.ts';

export interface Paths {
  config: string;
  storage: string;
  public: string;
}

/** One registered SDK function in the catalog (union of all registered connections). */
export interface CatalogEntry extends FunctionDeclaration {
  connectionId: string;
}

export type InvokeOutcome = { ok: true; data: unknown } | { ok: false; error: { message: string; code?: string } };

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
