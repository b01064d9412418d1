// lmdb-js's failed commit: "Commit failed" on every write, the errno a moment later on `commitError`. Parley reads
// the cause, calls it the store being unavailable, and leaves no rejection unhandled.
import { describe, expect, it } from 'vitest';
import { isStoreUnavailable } from '../../src/store/errors.ts';
import { classifyCommitFailure } from '../../src/store/lmdb/commit-failure.ts';

/** The shape lmdb-js gives (write.js rejectCommit): the cause is rejected after the write's own error is seen. */
function commitFailed(cause: unknown) {
  let reject!: (e: unknown) => void;
  const commitError = new Promise((_, r) => (reject = r));
  const err = Object.assign(new Error('Commit failed (see commitError for details)'), { commitError });
  return { err, fail: () => reject(cause) };
}

describe('a commit lmdb-js reports as failed', () => {
  it('is the store being unavailable, with the errno named (EIO, ENOSPC, map full)', async () => {
    for (const [errno, code] of [
      [5, 'EIO'],
      [28, 'ENOSPC'],
      [-30792, 'map_full'],
      [77, 'errno_77'],
    ] as const) {
      const { err, fail } = commitFailed(Object.assign(new Error('Input/output error'), { code: errno }));
      const classified = classifyCommitFailure(err);
      fail();
      const result = await classified;
      expect(isStoreUnavailable(result)).toBe(true);
      expect(result).toMatchObject({ code, message: expect.stringContaining('Input/output error') });
    }
  });

  it('handles the cause promise, so the process sees no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { err, fail } = commitFailed(Object.assign(new Error('Input/output error'), { code: 5 }));
      const classified = classifyCommitFailure(err);
      fail();
      await classified;
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a cause that never comes still gives an unavailable error; other errors pass unchanged', async () => {
    const { err } = commitFailed(new Error('never'));
    const result = await classifyCommitFailure(err);
    expect(result).toMatchObject({ name: 'StoreUnavailableError', code: 'commit_failed' });
    const plain = new Error('a bug');
    expect(await classifyCommitFailure(plain)).toBe(plain);
  });
});
