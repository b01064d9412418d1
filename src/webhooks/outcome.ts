// What one webhook attempt's result means for its delivery, as a pure function: delivered (2xx); dead (410 Gone, the
// endpoint removed from the config, or the retry window over); retried with backoff (anything else, `aborted` too: the
// POST may have reached the receiver); or `busy` (no room at the endpoint: the job waits without an attempt).
import type { Job } from '../store/model.ts';
import type { WebhookJob } from './types.ts';
import { keyPrefix } from './endpoints.ts';

const MAX_DELAY_MS = 3600_000;
/** A job stored by an older build (its key is not its endpoint's) waits this long when its endpoint is full. */
const LEGACY_WAIT_MS = 1000;

/** Exponential backoff with "equal jitter": half the doubled delay fixed, half random, so gaps grow on every retry. */
export function retryDelay(attempts: number, baseMs: number, random: () => number = Math.random): number {
  const d = Math.min(MAX_DELAY_MS, baseMs * 2 ** attempts);
  return Math.round(d / 2 + (random() * d) / 2);
}

export const isOk = (r: number | string) => typeof r === 'number' && r >= 200 && r < 300;

/** A delivery the open circuit refused: its error says what the endpoint last answered. */
const circuitOpen = (last: string | undefined) => `${(last ?? 'failing').replace(/ \(circuit open\)$/, '')} (circuit open)`;

export type Verdict =
  | { kind: 'busy'; waitUntil: number; reason: string }
  | { kind: 'delivered' }
  | { kind: 'dead'; error: string; reason: string }
  | { kind: 'retrying'; error: string; nextAt: number };

export function judge(result: number | string, job: Job<WebhookJob>, o: { now: number; retryHours: number; retryBaseMs: number }): Verdict {
  const { now } = o;
  if (result === 'busy') {
    const wait = job.key.startsWith(keyPrefix(job.payload.url)) ? 0 : LEGACY_WAIT_MS;
    return { kind: 'busy', waitUntil: now + wait, reason: job.lastError ?? 'waiting for a free connection to the endpoint' };
  }
  if (isOk(result)) return { kind: 'delivered' };
  const error = result === 'circuit_open' ? circuitOpen(job.lastError) : typeof result === 'number' ? `HTTP ${result}` : result;
  const retryMs = o.retryHours * 3600_000;
  if (result === 'endpoint_removed') return { kind: 'dead', error, reason: 'the endpoint is no longer configured' };
  if (result === 410) return { kind: 'dead', error, reason: 'HTTP 410 Gone: the receiver ended this delivery' };
  if (now - job.enqueuedAt >= retryMs) return { kind: 'dead', error, reason: `gave up after ${o.retryHours} h: ${error}` };
  return { kind: 'retrying', error, nextAt: Math.min(now + retryDelay(job.attempts, o.retryBaseMs), job.enqueuedAt + retryMs) };
}
