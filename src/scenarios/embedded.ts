// The Parley a test run talks to: an embedded one (the project's configuration, a fresh temporary store, anonymous
// widget sessions so each scenario's customer is who it says, test mode for the backend path), or a running one
// (`--url`). Then the integrator's backend: started from the suite's `backend.command`, or awaited until it connects.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Parley } from '../app.ts';
import { DEFAULT_GRAPH_URL, type Config } from '../config/schema.ts';
import { conversationIdFor } from '../conversations/history.ts';
import type { Suite } from './schema.ts';
import type { RunTarget } from './runner.ts';
import type { WhatsAppTarget } from './turns.ts';
import { storedHistory, toolCallsOf, type ToolCall } from '../conversations/tool-calls.ts';
import { callBackend, type BackendCallAnswer } from '../ops/scenario-test.ts';

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

/**
 * How the runner is a WhatsApp customer of an in-process Parley: when its WhatsApp channel is on (provider meta) and
 * test mode's mock sender stands for the Graph API (its outbox is what the customer received).
 */
function whatsappOf(parley: Parley): WhatsAppTarget | undefined {
  const { config, store, testMode } = parley.services;
  const wa = config.channels.whatsapp;
  const mock = testMode && (!wa.phone_id || !wa.token || wa.graph_url === DEFAULT_GRAPH_URL);
  if (!wa.enabled || wa.provider !== 'meta' || !mock || !wa.app_secret) return undefined;
  return {
    appSecret: wa.app_secret,
    phoneNumberId: wa.phone_id || '100000000000001',
    webhookPath: wa.webhook_path,
    async conversationOf(phone) {
      const customer = await store.customers.findBy('phone', phone);
      const conversationId = customer && conversationIdFor(customer.customerId, 'whatsapp');
      return conversationId && (await store.conversations.get(conversationId)) ? conversationId : undefined;
    },
    async pendingConfirmation(conversationId) {
      const pending = (await store.conversations.get(conversationId))?.pendingConfirmation;
      return pending && { id: pending.id, name: pending.name, args: pending.args };
    },
  };
}

/** How the runner reaches an in-process Parley: its URL and secret, its store's history, its SDK hub, WhatsApp. */
export function targetOf(parley: Parley): RunTarget {
  const { store } = parley.services;
  const hub = parley.runtime.hub;
  return {
    url: parley.url(),
    secret: parley.services.secret,
    toolCalls: async (conversationId) => toolCallsOf(await storedHistory(store.history, conversationId)),
    invokeBackend: (name, args) => callBackend(hub, name, args),
    whatsapp: whatsappOf(parley),
  };
}

/** WhatsApp for the run: the real webhook path, its own secrets, the mock sender (the Graph API is never called). */
const whatsappForRun = () => ({
  channels: {
    whatsapp: {
      enabled: true,
      provider: 'meta',
      phone_id: '100000000000001',
      token: randomBytes(16).toString('hex'),
      verify_token: randomBytes(16).toString('hex'),
      app_secret: randomBytes(24).toString('hex'),
      graph_url: DEFAULT_GRAPH_URL,
    },
  },
});

export async function startEmbedded(config: Config, suite: Suite, o: { whatsapp?: boolean } = {}): Promise<Harness> {
  const { createParley } = await import('../app.ts');
  const { createLogger } = await import('../logger.ts');
  const { ConfigSchema } = await import('../config/schema.ts');
  const dir = mkdtempSync(join(tmpdir(), 'parley-test-'));
  const overrides = {
    server: { host: '127.0.0.1', port: 0 },
    storage: { path: dir },
    secret: randomBytes(24).toString('hex'),
    identity: { allow_anonymous: true },
    // The suite's backend stands for the demo's.
    demo: suite.backend ? { backend: false } : {},
    logging: { level: 'error' },
  };
  const input = merge(merge(merge(config, suite.config ?? {}), overrides), o.whatsapp ? whatsappForRun() : {}) as { server: { base_url?: string } };
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

/**
 * A running Parley (`--url`). In test mode (SERVICE_TEST_MODE=1) it shows the tool calls with their arguments and
 * calls the backend for `expect: { backend }` (src/ops/scenario-test.ts); otherwise the runner sees tool names
 * from telemetry only and has no backend checks (README, "Testing your conversations").
 */
export async function runningParley(url: string, secret: string): Promise<Harness> {
  const base = url.replace(/\/$/, '');
  const target: RunTarget = { url: base, secret };
  if ((await functionsNow(target)) === undefined) return { target, stop: async () => undefined };
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const answer = async <T>(res: Response): Promise<T> => {
    if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    return (await res.json()) as T;
  };
  target.toolCalls = async (conversationId) =>
    (await answer<{ items: ToolCall[] }>(await fetch(`${base}/__test__/conversations/${encodeURIComponent(conversationId)}/tool-calls`, { headers }))).items;
  target.invokeBackend = async (name, args) =>
    answer<BackendCallAnswer>(await fetch(`${base}/__test__/sdk/invoke`, { method: 'POST', headers, body: JSON.stringify({ name, args }) }));
  return { target, stop: async () => undefined };
}

/** The functions connected now; undefined when Parley does not say (not in test mode). */
async function functionsNow(target: RunTarget): Promise<string[] | undefined> {
  const res = await fetch(`${target.url}/__test__/sdk/functions`).catch(() => undefined);
  if (res?.status === 404) return undefined;
  return res?.ok ? ((await res.json()) as string[]) : [];
}

/** How many functions are connected (`/ready`'s checks.sdk.functions): what a Parley outside test mode says. */
async function functionCount(target: RunTarget): Promise<number> {
  const res = await fetch(`${target.url}/ready`).catch(() => undefined);
  const body = (await res?.json().catch(() => undefined)) as { checks?: { sdk?: { functions?: number } } } | undefined;
  return body?.checks?.sdk?.functions ?? 0;
}

/** Whether the functions wanted are connected: by name in test mode, by count otherwise. */
async function connected(target: RunTarget, wanted: string[]): Promise<{ ok: boolean; now: string }> {
  const names = await functionsNow(target);
  if (names !== undefined) return { ok: wanted.length ? wanted.every((f) => names.includes(f)) : names.length > 0, now: names.join(', ') || 'none' };
  const count = await functionCount(target);
  return { ok: count >= Math.max(1, wanted.length), now: `${count} functions` };
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
    const { ok, now } = await connected(target, wanted);
    if (ok) return { stop };
    if (child && child.exitCode !== null) throw new Error(`the backend exited with ${child.exitCode} before connecting:\n${output}`);
    if (Date.now() > until) {
      await stop();
      throw new Error(`the backend did not connect within ${deadlineMs / 1000} s (connected now: ${now})\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
