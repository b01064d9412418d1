// One webhook endpoint's circuit (issue 34, part 1), as pure transitions: `closed` while it answers; once its
// attempts have failed FAILURES_TO_OPEN times in a row over at least FAILING_FOR_MS (a receiver that is down, not one
// that refuses a few events once), it opens for a cool-down: deliveries to it fail at once, without a connection,
// each counted as an attempt on its own retry schedule (so the retry window still ends them). When the cool-down is
// over one delivery goes as a probe (half-open: nothing else is sent meanwhile): a 2xx closes the circuit, anything
// else opens it again for twice as long (up to MAX_OPEN_MS).

export const FAILURES_TO_OPEN = 5;
export const FAILING_FOR_MS = 20_000;
export const MAX_OPEN_MS = 60_000;

export type Circuit =
  { state: 'closed'; failures: number; since?: number } | { state: 'open'; until: number; openMs: number } | { state: 'half-open'; openMs: number };

export const closedCircuit = (): Circuit => ({ state: 'closed', failures: 0 });

/** What a delivery may do now: `send`, `probe` (the one trial of a half-open circuit) or `refuse` (fail at once). */
export type Admission = 'send' | 'probe' | 'refuse' | 'wait';

/** `wait`: a probe is out; no other delivery is sent until its answer. */
export function admission(c: Circuit, now: number): Admission {
  if (c.state === 'closed') return 'send';
  if (c.state === 'half-open') return 'wait';
  return now >= c.until ? 'probe' : 'refuse';
}

/** The circuit once a probe was let through. */
export const probing = (c: Circuit): Circuit => (c.state === 'open' ? { state: 'half-open', openMs: c.openMs } : c);

/** The circuit after an attempt's answer (`ok`: a 2xx). `firstOpenMs`: how long it opens the first time. */
export function afterAttempt(c: Circuit, ok: boolean, now: number, firstOpenMs: number): Circuit {
  if (ok) return closedCircuit();
  if (c.state === 'closed') {
    const failures = c.failures + 1;
    const since = c.since ?? now;
    if (failures < FAILURES_TO_OPEN || now - since < FAILING_FOR_MS) return { state: 'closed', failures, since };
    const openMs = Math.min(MAX_OPEN_MS, firstOpenMs);
    return { state: 'open', until: now + openMs, openMs };
  }
  if (c.state === 'half-open') {
    const openMs = Math.min(MAX_OPEN_MS, c.openMs * 2);
    return { state: 'open', until: now + openMs, openMs };
  }
  return c; // an attempt begun before the circuit opened: it is open already
}
