// Bounds how long a caller waits for the store: past the deadline it gets a StoreUnavailableError (a 503 to an
// HTTP client, which retries) instead of hanging. The write itself may still complete later; every write an
// acknowledgement waits for is idempotent (de-duplicated by id), so the retry finds it.
import { StoreUnavailableError } from './errors.ts';

export const STORE_DEADLINE_MS = 10_000;

export function withinDeadline<T>(work: Promise<T>, ms = STORE_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError('timeout', `the store did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
