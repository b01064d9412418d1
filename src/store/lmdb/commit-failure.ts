// lmdb-js reports a failed commit twice: every write of the transaction rejects with "Commit failed (see
// commitError for details)", and the real cause (the errno of the failed write or sync: ENOSPC, EIO on a full
// tmpfs, EROFS, MDB_MAP_FULL) arrives a moment later on `commitError`, a promise no one else listens to. Left
// alone, that promise is an unhandled rejection and the failure looks like a bug. A commit that fails is a fault of
// the environment (the data was accepted into the transaction), so it becomes a StoreUnavailableError with the cause.
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError } from '../errors.ts';

const ERRNO_CODES: Record<number, string> = { 5: 'EIO', 28: 'ENOSPC', 30: 'EROFS', 122: 'EDQUOT', [-30792]: 'map_full' };

/** How long to wait for lmdb-js to settle `commitError` (it does so in the same callback, right after). */
const CAUSE_WAIT_MS = 1_000;

type CommitFailed = Error & { commitError: Promise<unknown> };

export const isCommitFailure = (err: unknown): err is CommitFailed =>
  err instanceof Error && typeof (err as { commitError?: { then?: unknown } }).commitError?.then === 'function';

/** The cause lmdb-js reports on `commitError`, or undefined if it does not come within a second. */
async function causeOf(err: CommitFailed): Promise<{ code?: unknown; message?: unknown } | undefined> {
  const stop = new AbortController();
  const late = sleep(CAUSE_WAIT_MS, undefined, { ref: false, signal: stop.signal }).catch(() => undefined);
  try {
    return await Promise.race([
      err.commitError.then(
        () => undefined,
        (cause: unknown) => (cause && typeof cause === 'object' ? (cause as { code?: unknown; message?: unknown }) : { message: String(cause) }),
      ),
      late,
    ]);
  } finally {
    stop.abort();
  }
}

/** A failed commit as the store being unavailable (with its cause); any other error unchanged. */
export async function classifyCommitFailure(err: unknown): Promise<unknown> {
  if (!isCommitFailure(err)) return err;
  const cause = await causeOf(err);
  const errno = typeof cause?.code === 'number' ? cause.code : undefined;
  const code = errno !== undefined ? (ERRNO_CODES[errno] ?? `errno_${errno}`) : typeof cause?.code === 'string' ? cause.code : 'commit_failed';
  const message = typeof cause?.message === 'string' && cause.message ? cause.message : 'the commit failed';
  return new StoreUnavailableError(code, `the store cannot write: ${message} (${code})`);
}
