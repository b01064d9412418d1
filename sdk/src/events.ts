// The client's events (`on`) and the integrator's live handlers: a listener's or handler's failure is the integrator's,
// reported as an `error` event (handlers) or dropped (listeners), never a crash of the client.
import type { ClientEvents } from './client-types.ts';

export type Emit = <E extends keyof ClientEvents>(event: E, ...args: ClientEvents[E]) => void;

export interface Events {
  emit: Emit;
  on<E extends keyof ClientEvents>(event: E, listener: (...args: ClientEvents[E]) => void): () => void;
  /** Emits `error` with what was thrown (an `Error` as is, anything else as its text). */
  report(err: unknown): void;
  /** Calls every handler with the notice; a handler that throws or rejects is reported. */
  notify<T>(handlers: Set<(n: T) => void | Promise<void>>, notice: T): void;
}

export function createEvents(): Events {
  const listeners = new Map<keyof ClientEvents, Set<(...args: any[]) => void>>();

  const emit: Emit = (event, ...args) => {
    for (const l of listeners.get(event) ?? []) {
      try {
        l(...args);
      } catch {
        /* a listener's failure is its own */
      }
    }
  };
  const report = (err: unknown) => emit('error', err instanceof Error ? err : new Error(String(err)));

  return {
    emit,
    report,
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => void set.delete(listener);
    },
    notify(handlers, notice) {
      for (const h of handlers) {
        try {
          void Promise.resolve(h(notice)).catch(report);
        } catch (err) {
          report(err);
        }
      }
    },
  };
}
