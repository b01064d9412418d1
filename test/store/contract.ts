// Shared by the store contract files: a fresh store per test, and N callers started at once.
import { afterEach, beforeEach } from 'vitest';
import type { Store } from '../../src/store/repos.ts';

/** A store with no data for each test of the enclosing describe, closed after it. */
export function freshStore(open: () => Promise<Store>): () => Store {
  let store: Store | undefined;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  return () => {
    if (!store) throw new Error('no store outside a test');
    return store;
  };
}

/** Starts `n` calls of `fn` together and resolves with every result. */
export function concurrently<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
}

/**
 * Opens connections ahead of a concurrency test (a pooled engine): otherwise the first transactions of a burst
 * run while the others still wait for their connection, one after another, and a missing lock would go unseen.
 */
export async function warmUp(store: Store, n = 16): Promise<void> {
  await concurrently(n, () => store.customers.get('warm-up'));
}
