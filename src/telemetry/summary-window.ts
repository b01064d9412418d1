// The summary's window fitted to its data: a fresh install with a few minutes of history, asked for a day, gets its
// minutes in buckets small enough to show a shape (not one point at the day's end).
import type { TelemetryStore } from '../store/repos.ts';

/** Bucket sizes a chart's axis reads well in, smallest first. */
const NICE_BUCKETS = [10_000, 30_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000];
/** A window is cut into about this many buckets. */
const POINTS = 48;
/** A fitted window has at least this many buckets (one bucket alone would be one point on an axis without a span). */
const MIN_BUCKETS = 12;

/** The smallest nice bucket that cuts `spanMs` into at most about 48 buckets. */
export const niceBucket = (spanMs: number) => NICE_BUCKETS.find((b) => spanMs / b <= POINTS) ?? NICE_BUCKETS[NICE_BUCKETS.length - 1];

/** When the window's first record happened (the earlier of the first event and the first LLM call), if any. */
async function firstRecordAt(telemetry: TelemetryStore, window: { since: number; until: number }): Promise<number | undefined> {
  let first: number | undefined;
  for (const kind of ['events', 'turnCalls'] as const) {
    for await (const r of telemetry.window(kind, window)) {
      first = first === undefined ? r.at : Math.min(first, r.at);
      break;
    }
  }
  return first;
}

/**
 * The window from its first record (at a bucket's start) to `until`, with a bucket from that span, no larger than
 * `maxBucketMs`; the window as asked when it has no records, or when they fill it.
 */
export async function fitWindow(
  telemetry: TelemetryStore,
  o: { since: number; until: number; maxBucketMs?: number },
): Promise<{ since: number; until: number; bucketMs: number }> {
  const first = await firstRecordAt(telemetry, o);
  const start = first === undefined ? o.since : Math.max(o.since, first);
  const bucketMs = Math.min(o.maxBucketMs ?? Infinity, niceBucket(Math.max(1, o.until - start)));
  const since = Math.min(Math.floor(start / bucketMs) * bucketMs, o.until - MIN_BUCKETS * bucketMs);
  return { since: Math.max(o.since, since), until: o.until, bucketMs };
}
