// Reconnect delays: exponential (0.5 s doubling to 30 s) with "equal jitter"
// (half fixed, half random), so a fleet of SDKs does not reconnect in step.
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  random?: () => number;
}

export function backoffDelay(attempt: number, o: BackoffOptions = {}): number {
  const initial = o.initialMs ?? 500;
  const max = o.maxMs ?? 30_000;
  const random = o.random ?? Math.random;
  const ceiling = Math.min(max, initial * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
