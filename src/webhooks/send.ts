// One delivery attempt (issue 34, part 1): a POST with ONE deadline over all of it (DNS, connect, sending, the
// answer's headers and whatever of its body is read). The answer's status is all Parley needs: a body that is
// announced small (Content-Length up to SMALL_BODY) is drained in the background so the connection can be reused,
// still under the deadline and for at most a second; any other body is destroyed at once. So a receiver that answers 200 and then trickles its
// body byte by byte costs one socket for at most the deadline, never the attempt's outcome, and never a second run.
// Redirects are not followed (a 3xx is a failed attempt).
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../clock.ts';

const SMALL_BODY = 16 * 1024;
const DRAIN_GRACE_MS = 1000;

export interface Post {
  url: string;
  body: string;
  headers: Record<string, string>;
  dispatcher: Dispatcher;
  timeoutMs: number;
  clock: Clock;
  /** Abort the attempt early (the job's lease ended, Parley is stopping). Listened to only while it runs. */
  signals: AbortSignal[];
  /**
   * Called once the attempt holds no connection any more (its answer's body drained or destroyed, or it failed),
   * which may be after the status is returned: the endpoint's slot is free only then.
   */
  onReleased?: () => void;
}

/** The HTTP status, or why there is none: `timeout`, `aborted`, or the network error's code. */
export async function postOnce(p: Post): Promise<number | string> {
  const controller = new AbortController();
  let timedOut = false;
  const deadline = p.clock.setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('webhook deadline'));
  }, p.timeoutMs);
  const stop = () => controller.abort(new Error('attempt cancelled'));
  for (const s of p.signals) {
    if (s.aborted) stop();
    s.addEventListener('abort', stop, { once: true });
  }
  const done = () => {
    p.clock.clearTimeout(deadline);
    for (const s of p.signals) s.removeEventListener('abort', stop);
    p.onReleased?.();
  };
  let res: Dispatcher.ResponseData;
  try {
    res = await request(p.url, { method: 'POST', headers: p.headers, body: p.body, dispatcher: p.dispatcher, signal: controller.signal });
  } catch (err) {
    done();
    if (timedOut) return 'timeout';
    if (controller.signal.aborted) return 'aborted';
    return (err as { code?: string }).code ?? 'network_error';
  }
  // A small body comes at once from a receiver that means well: one that trickles it loses its connection after a
  // short grace instead of holding the endpoint's slot until the deadline.
  const grace = p.clock.setTimeout(() => res.body.destroy(), DRAIN_GRACE_MS);
  discard(res, () => {
    p.clock.clearTimeout(grace);
    done();
  });
  return res.statusCode;
}

/** Drops the answer's body: drained when announced small (the deadline still holds), destroyed otherwise. */
function discard(res: Dispatcher.ResponseData, done: () => void) {
  const length = Number(res.headers['content-length']);
  if (Number.isInteger(length) && length >= 0 && length <= SMALL_BODY) {
    res.body
      .dump({ limit: SMALL_BODY })
      .catch(() => undefined)
      .finally(done);
    return;
  }
  res.body.on('error', () => undefined);
  res.body.destroy();
  done();
}
