// Whether the store's writes work, as `/ready` reports it: the last write's outcome decides. A failure is named
// by its cause (`write_failing: ENOSPC`); the first success after failures clears it and tells the listeners,
// which retry what was waiting for the store (conversations, queued jobs).
import { StoreUnavailableError } from './errors.ts';

export interface WriteHealth {
  failed(err: unknown): void;
  succeeded(): void;
  /** `ok`, or `write_failing: <cause>`. */
  status(): string;
  onRecovered(listener: () => void): () => void;
}

export function causeOf(err: unknown): string {
  if (err instanceof StoreUnavailableError) return err.code;
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && e.code) return e.code;
  if (typeof e?.code === 'number') return `errno ${e.code}`;
  return String(e?.message ?? err).slice(0, 120);
}

export function createWriteHealth(): WriteHealth {
  let failing: string | undefined;
  const listeners = new Set<() => void>();
  return {
    failed(err) {
      failing = causeOf(err);
    },
    succeeded() {
      if (failing === undefined) return;
      failing = undefined;
      for (const l of [...listeners]) {
        try {
          l();
        } catch {
          /* a listener's failure is its own */
        }
      }
    },
    status: () => (failing === undefined ? 'ok' : `write_failing: ${failing}`),
    onRecovered(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
