// Starts a real Parley (in-process or as a child process) on 127.0.0.1:0, for integration tests: with a real LMDB
// in a temp dir, or (PARLEY_TEST_ENGINE=postgres) a real PostgreSQL database standing for that dir (test-engine.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { trackChild } from './child-processes.ts';
import { onTestEngine } from './test-engine.ts';
import { tempDir } from './tmp.ts';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { createParley, type Parley } from '../../src/app.ts';
import { createClock, type Clock } from '../../src/clock.ts';
import { ConfigSchema, type ConfigInput } from '../../src/config/schema.ts';
import { createLogger } from '../../src/logger.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';

export const TEST_SECRET = 'test-secret-0123456789abcdef';

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

export { tempDir };

export function testConfig(overrides: DeepPartial<ConfigInput> = {}, storagePath = tempDir()): ConfigInput {
  const base: ConfigInput = {
    server: { host: '127.0.0.1', port: 0 },
    // A small reserve: a test run opens hundreds of stores (see src/store/lmdb/disk-reserve.ts).
    storage: { path: storagePath, disk_reserve_mb: 1 },
    secret: TEST_SECRET,
    logging: { level: 'silent' },
    identity: { allow_anonymous: true },
    demo: { backend: false },
    // Most tests run without a backend: a turn resumed after a restart does not wait for one (tests of the wait set it).
    sdk: { resume_grace_seconds: 0 },
    // Most tests count one reply per customer message: bursts (answered together) are on only where a test says so.
    conversation: { bursts: false },
  };
  return merge(base, overrides) as ConfigInput;
}

function merge(a: unknown, b: unknown): unknown {
  if (b === undefined) return a;
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
    return out;
  }
  return b;
}

export interface TestParley extends Parley {
  url(): string;
  logs: string[];
  storagePath: string;
  close(): Promise<void>;
}

/** A real Parley in this process. `logs` collects every log line (for secret greps). */
export async function startParley(
  o: { config?: DeepPartial<ConfigInput>; storagePath?: string; clock?: Clock; testMode?: boolean; port?: number } = {},
): Promise<TestParley> {
  const storagePath = o.storagePath ?? tempDir();
  const input = await onTestEngine(testConfig(o.config, storagePath), storagePath);
  if (o.port !== undefined) (input.server as { port: number }).port = o.port;
  const config = ConfigSchema.parse(input);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const level = (o.config?.logging?.level as string | undefined) ?? 'info';
  const parley = await createParley({
    config,
    testMode: o.testMode ?? true,
    clock: o.clock ?? createClock(),
    logger: createLogger(level === 'silent' ? 'info' : level, sink),
  });
  await parley.start();
  return Object.assign(parley, {
    logs,
    storagePath,
    async close() {
      await parley.stop();
    },
  });
}

export function cleanup(path: string) {
  rmSync(path, { recursive: true, force: true });
}

export interface ParleyProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Parley as a real child process (for SIGKILL/SIGTERM tests). */
export async function spawnParley(o: {
  config?: DeepPartial<ConfigInput>;
  storagePath: string;
  port?: number;
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** Another checkout of Parley to run (benchmarks compare a change with its base); default this one. */
  root?: string;
  /** `build`: the production build (`node --enable-source-maps dist/main.js`, built beforehand); default the source through tsx. */
  entry?: 'source' | 'build';
}): Promise<ParleyProcess> {
  const input = await onTestEngine(testConfig(o.config, o.storagePath), o.storagePath);
  (input.server as { port: number }).port = o.port ?? 0;
  (input.logging as { level: string }).level = o.env?.PARLEY_LOG_LEVEL ?? 'info';
  const configPath = join(o.storagePath, 'test-config.yaml');
  writeFileSync(configPath, stringify(input));
  const root = o.root ?? PROJECT_ROOT;
  const main = o.entry === 'build' ? ['--enable-source-maps', join(root, 'dist/main.js')] : ['--import', 'tsx', join(root, 'src/main.ts')];
  const child = trackChild(
    spawn(process.execPath, [...(o.nodeArgs ?? []), ...main], {
      cwd: root,
      env: { ...process.env, SERVICE_CONFIG: configPath, SERVICE_TEST_MODE: '1', SERVICE_SDK_SECRET: TEST_SECRET, ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d.toString()));
  child.stderr!.on('data', (d) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running after a failed start
      reject(new Error(`parley did not start:\n${out}`));
    }, 60_000); // generous: a cold start (tsx compiling every module) on a busy 2-core machine has taken over 20 s
    const check = () => {
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.on('exit', (code) => reject(new Error(`parley exited with ${code}:\n${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}
