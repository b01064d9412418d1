// The demo backend connects to Parley after it listens: tests that use its functions wait for them first.

/** Resolves once Parley's demo backend has registered the function `fn`; fails after `deadlineMs` without it. */
export async function demoBackendReady(parley: { url(): string }, fn = 'cancelOrder', deadlineMs = 20_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const names = (await fetch(`${parley.url()}/__test__/sdk/functions`).then((x) => x.json())) as string[];
    if (names.includes(fn)) return;
    if (Date.now() > deadline) throw new Error(`the demo backend did not register ${fn} within ${deadlineMs} ms (it has: ${names.join(', ')})`);
    await new Promise((res) => setTimeout(res, 50));
  }
}
