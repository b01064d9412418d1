// A process-level view of one LMDB quirk: when a commit fails (a full disk, EIO), lmdb-js rejects the promise of
// every write in that commit. The store awaits and classifies the ones it asked for (a StoreUnavailableError with
// the cause, logged at warn by the feature that met it); one it did not await surfaces as an unhandled rejection of
// the raw "Commit failed" error. That is the environment, already reported where the write was awaited, not a bug:
// `main` logs it at warn, without a stack, rather than as an unhandled error.
import { isCommitFailure } from './lmdb/commit-failure.ts';

/** True for lmdb-js's "Commit failed" rejection of a write in a commit that failed. */
export const isFailedCommitWrite = (err: unknown): boolean => isCommitFailure(err);
