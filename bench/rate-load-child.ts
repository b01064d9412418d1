// Runs `httpRateLoad` in its own process (forked by `httpRateLoadInChild`), so
// the load generator's timers are not delayed by the server it measures, the
// server's event loop is its own, and the requests (built here by the given
// generator module) never sit in the server's heap.
import { httpRateLoad, type LoadResult } from './lib.ts';

export type RequestGenerator = (count: number, args: unknown) => { body: string; headers: Record<string, string> }[];

interface Job {
  origin: string;
  path: string;
  ratePerSecond: number;
  durationMs: number;
  generator: { module: string; args: unknown };
}

process.once('message', async (job: Job) => {
  // A fresh process is cold (JIT, connections): warm it up on the first requests, measure the rest.
  const warmup = Math.ceil(job.ratePerSecond / 2);
  const measured = Math.ceil((job.ratePerSecond * job.durationMs) / 1000);
  const generate = ((await import(job.generator.module)) as { default: RequestGenerator }).default;
  const requests = generate(warmup + measured, job.generator.args);
  const run = (offset: number, durationMs: number) =>
    httpRateLoad({
      origin: job.origin,
      path: job.path,
      ratePerSecond: job.ratePerSecond,
      durationMs,
      body: (i) => requests[offset + i].body,
      headers: (i) => requests[offset + i].headers,
    });
  await run(0, (warmup * 1000) / job.ratePerSecond);
  const result: LoadResult = await run(warmup, job.durationMs);
  process.send?.(result, () => process.exit(0));
});
