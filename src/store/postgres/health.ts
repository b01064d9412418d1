// Whether PostgreSQL answers, as `/ready` reports it (`checks().database`): the last statement's outcome decides. A
// failure that means "unavailable" (unavailable.ts) is named by its cause, `unreachable: ECONNREFUSED`; the first
// answer after it clears it and tells the listeners, which retry what waited for the store.
import type { Unavailability } from './unavailable.ts';

export interface DatabaseHealth {
  failed(u: Unavailability): void;
  /** The server answered (a result, or an error about the statement itself). */
  answered(): void;
  failing(): boolean;
  status(): string;
  onRecovered(listener: () => void): () => void;
}

export function createDatabaseHealth(o: { onFailing?: (status: string) => void; onRecovered?: () => void } = {}): DatabaseHealth {
  let failing: string | undefined;
  const listeners = new Set<() => void>();
  return {
    failed(u) {
      const status = `${u.code}: ${u.cause}`;
      const first = failing === undefined;
      failing = status;
      if (first) o.onFailing?.(status);
    },
    answered() {
      if (failing === undefined) return;
      failing = undefined;
      o.onRecovered?.();
      for (const l of [...listeners]) {
        try {
          l();
        } catch {
          /* a listener's failure is its own */
        }
      }
    },
    failing: () => failing !== undefined,
    status: () => failing ?? 'ok',
    onRecovered(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
