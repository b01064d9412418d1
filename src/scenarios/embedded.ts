// The Parley a test run talks to: an embedded one (the project's configuration, a fresh temporary store, anonymous
// widget sessions so each scenario's customer is who it says, test mode for the backend path), or a running one
// (`--url`). Then the integrator's backend: started from the suite's `backend.command`, or awaited until it connects.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Parley } from '../app.ts';
import type { Config } from '../config/schema.ts';
import type { Suite } from './schema.ts';
import type { RunTarget } from './runner.ts';
import { storedHistory, toolCallsOf } from './history.ts';

export interface Harness {
  target: RunTarget;
  stop(): Promise<void>;
}

function merge(a: unknown, b: unknown): unknown {
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
    return out;
  }
  return b === undefined ? a : b;
}

/** How the runner reaches an in-process Parley: its URL and secret, its store's history, its SDK hub. */
export function targetOf(parley: Parley): RunTarget {
  const { store } = parley.services;
  const hub = parley.runtime.hub;
  return {
    url: parley.url(),
    secret: parley.services.secret,
    toolCalls: async (conversationId) => toolCallsOf(await storedHistory(store.history, conversationId)),
    invokeBackend: async (name, args) => {
      const out = await hub.invoke(name, args, { customerId: 'parley-test', conversationId: 'parley-test', channel: 'web', verified: true });
      return out.ok ? { ok: true, data: out.data } : { ok: false, error: `${out.error.code ?? 'error'}: ${out.error.message}` };
    },
  };
}

export async function startEmbedded(config: Config, suite: Suite): Promise<Harness> {
  const { createParley } = await import('../app.ts');
  const { createLogger } = await import('../logger.ts');
  const { ConfigSchema } = await import('../config/schema.ts');
  const dir = mkdtempSync(join(tmpdir(), 'parley-test-'));
  const overrides = {
    server: { host: '127.0.0.1', port: 0 },
    storage: { path: dir },
    secret: randomBytes(24).toString('hex'),
    identity: { allow_anonymous: true },
    // The suite's backend stands for the demo's; the demo's help articles are not the suite's knowledge base.
    demo: suite.backend ? { backend: false, knowledge: false } : { knowledge: false },
    logging: { level: 'error' },
  };
  const input = merge(merge(config, suite.config ?? {}), overrides) as { server: { base_url?: string } };
  delete input.server.base_url; // its own address, known once it listens
  const parley = await createParley({ config: ConfigSchema.parse(input), testMode: true, logger: createLogger('error', process.stderr) });
  await parley.start();
  return {
    target: targetOf(parley),
    async stop() {
      await parley.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A running Parley (`--url`): tool names from telemetry, no backend checks (README, "Testing your conversations"). */
export function runningParley(url: string, secret: string): Harness {
  return { target: { url: url.replace(/\/$/, ''), secret }, stop: async () => undefined };
}

/** The functions connected now; undefined when Parley does not say (not in test mode): then nothing is awaited. */
async function functionsNow(target: RunTarget): Promise<string[] | undefined> {
  const res = await fetch(`${target.url}/__test__/sdk/functions`).catch(() => undefined);
  if (res?.status === 404) return undefined;
  return res?.ok ? ((await res.json()) as string[]) : [];
}

/** Starts the suite's backend (if it says how) and waits until its functions are connected. */
export async function startBackend(suite: Suite, suiteDir: string, target: RunTarget, deadlineMs = 60_000): Promise<{ stop(): Promise<void> }> {
  let child: ChildProcess | undefined;
  let output = '';
  if (suite.backend) {
    child = spawn(suite.backend.command, {
      shell: true,
      cwd: resolve(suiteDir, suite.backend.cwd ?? '.'),
      env: Object.assign({}, process.env, { PARLEY_URL: target.url, SERVICE_SDK_SECRET: target.secret }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
  }
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child!.once('exit', r));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  };
  const wanted = suite.backend?.functions ?? [];
  const until = Date.now() + deadlineMs;
  for (;;) {
    const now = await functionsNow(target);
    if (now === undefined) return { stop };
    if (wanted.length ? wanted.every((f) => now.includes(f)) : now.length > 0) return { stop };
    if (child && child.exitCode !== null) throw new Error(`the backend exited with ${child.exitCode} before connecting:\n${output}`);
    if (Date.now() > until) {
      await stop();
      throw new Error(`the backend did not connect within ${deadlineMs / 1000} s (functions now: ${now.join(', ') || 'none'})\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
