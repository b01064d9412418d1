// Errors the store raises for conditions of the environment, not of the data written: callers treat
// them as "try again later" (a 503, an `unavailable` frame, a job that waits without spending an attempt).

/** The store cannot write now (a full disk, the size limit reached, a database that went away, closed). */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** A short cause for `/ready` and logs, e.g. `ENOSPC`, `map_full`, `EROFS`. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** The store's files cannot be used at all (damaged, or in use by another process): start-up stops. */
export class StoreOpenError extends Error {
  override readonly name = 'StoreOpenError';
}

export const isStoreUnavailable = (err: unknown): err is StoreUnavailableError => err instanceof StoreUnavailableError;

/**
 * A write for a conversation by a node that no longer owns it at the epoch it holds (another node claimed it: this
 * one was paused, partitioned or slow). The transaction rolls back; the node must emit nothing and stop that actor.
 */
export class OwnershipLostError extends Error {
  override readonly name = 'OwnershipLostError';
  constructor(
    readonly conversationId: string,
    readonly nodeId: string,
    readonly epoch: number,
    /** The owner now, when known. */
    readonly current?: { nodeId: string | null; epoch: number },
  ) {
    super(
      `conversation ${conversationId}: node ${nodeId} lost ownership at epoch ${epoch}` +
        (current ? ` (now ${current.nodeId ?? 'unowned'} at epoch ${current.epoch})` : ''),
    );
  }
}

export const isOwnershipLost = (err: unknown): err is OwnershipLostError => err instanceof OwnershipLostError;
