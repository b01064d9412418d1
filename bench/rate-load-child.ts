// Runs `httpRateLoad` in its own process (forked by `httpRateLoadInChild`), so
// the load generator's timers are not delayed by the server it measures and
// the server's event loop is its own. `requests` must cover the warm-up too.
import { httpRateLoad, type LoadResult } from './lib.ts';

interface Job {
  origin: string;
  path: string;
  ratePerSecond: number;
  durationMs: number;
  requests: { body: string; headers: Record<string, string> }[];
}

process.once('message', async (job: Job) => {
  // A fresh process is cold (JIT, connections): warm it up on the first requests, measure the rest.
  const warmup = Math.min(job.requests.length >> 1, Math.ceil(job.ratePerSecond / 2));
  const run = (offset: number, durationMs: number) =>
    httpRateLoad({
      origin: job.origin,
      path: job.path,
      ratePerSecond: job.ratePerSecond,
      durationMs,
      body: (i) => job.requests[(offset + i) % job.requests.length].body,
      headers: (i) => job.requests[(offset + i) % job.requests.length].headers,
    });
  await run(0, (warmup * 1000) / job.ratePerSecond);
  const result: LoadResult = await run(warmup, job.durationMs);
  process.send?.(result, () => process.exit(0));
});
