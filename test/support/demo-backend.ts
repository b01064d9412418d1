// A backend connects to Parley after it listens (the demo's too): tests that use its functions wait for them first.

/** Resolves once a backend has registered the function `fn` with Parley; fails after `deadlineMs` without it. */
export async function functionRegistered(parley: { url(): string }, fn: string, deadlineMs = 20_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const names = (await fetch(`${parley.url()}/__test__/sdk/functions`).then((x) => x.json())) as string[];
    if (names.includes(fn)) return;
    if (Date.now() > deadline) throw new Error(`no backend registered ${fn} within ${deadlineMs} ms (Parley has: ${names.join(', ')})`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Resolves once Parley's demo backend has registered the function `fn`. */
export const demoBackendReady = (parley: { url(): string }, fn = 'cancelOrder', deadlineMs = 20_000) => functionRegistered(parley, fn, deadlineMs);
