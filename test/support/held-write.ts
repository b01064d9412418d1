// Holds a running Parley's next conversation write in flight (as a slow flush would), so a test can act while it is:
// what arrives meanwhile waits for the write after it.
import type { Store } from '../../src/store/repos.ts';

export interface HeldWrite {
  /** Resolves once the held write has begun (and waits). */
  begun(): Promise<void>;
  /** Lets the held write go on. */
  release(): void;
  /** The conversation writes begun since the hold was set (the held one first). */
  writes(): number;
  /** Releases the write, and the store's writes are no longer counted. */
  restore(): void;
}

export function holdNextWrite(store: Store): HeldWrite {
  const persist = store.conversations.persist;
  let release: (() => void) | undefined;
  let begun: () => void = () => undefined;
  const started = new Promise<void>((r) => (begun = r));
  let writes = 0;
  store.conversations.persist = async (...args) => {
    if (writes++ === 0) {
      const held = new Promise<void>((r) => (release = r));
      begun();
      await held;
    }
    return persist.apply(store.conversations, args);
  };
  return {
    begun: () => started,
    release: () => release?.(),
    writes: () => writes,
    restore() {
      release?.();
      store.conversations.persist = persist;
    },
  };
}
