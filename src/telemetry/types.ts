export interface TelemetryEvent {
  id: string;
  at: number;
  type: string;
  conversationId?: string;
  customerId?: string;
  customerExternalId?: string;
  channel?: string;
  data: Record<string, unknown>;
}

export interface TurnCallRecord {
  id: string;
  turnId: string;
  conversationId: string;
  customerId: string;
  sequence: number;
  at: number;
  provider: string;
  model: string;
  purpose: 'chat' | 'reflection' | string;
  durationMs: number;
  promptTokens: number;
  completionTokens: number;
  toolCalls: string[];
  ok: boolean;
  error?: string;
}

export type NewEvent = Omit<TelemetryEvent, 'id' | 'at' | 'data'> & { data?: Record<string, unknown>; at?: number };
export type NewTurnCall = Omit<TurnCallRecord, 'id' | 'at'> & { at?: number };

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
