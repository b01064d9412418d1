// The processes a test starts die with it, whatever becomes of the test. Every helper that spawns a process hands it to
// `trackChild` (or to a `childScope()` it took when its server was made). A child started inside a test (its body,
// beforeEach, afterEach) is SIGKILLed once that test has finished — passed, failed or timed out: vitest runs
// onTestFinished even for a test body it abandoned at its timeout, whose own `finally` never runs. One started in
// beforeAll or at a file's top level is SIGKILLed after the file's own afterAll hooks (setup file
// child-processes.setup.ts). The last resort: any still running when the worker exits, is told to stop (vitest's
// SIGTERM) or loses vitest (its IPC channel closes) is SIGKILLed right then, synchronously; a worker killed outright
// runs none of that, so each child is also listed on disk for the run's global teardown (child-ledger.ts).
// A child that has exited already is skipped, so a helper's own kill()/stop() and a test that SIGKILLs a node and
// starts another on the same data are untouched. Outside a vitest worker (benchmarks, `npm run pg:start`, the global
// setup's shared PostgreSQL) nothing is tracked.
import type { ChildProcess } from 'node:child_process';
import { onTestFinished, TestRunner, type RunnerTestCase } from 'vitest';
import { forgetChild, recordChild } from './child-ledger.ts';

export interface TrackOptions {
  /** The child was spawned with `detached: true`: its whole process group is killed (the leader may be gone). */
  group?: boolean;
  /** Kills the child and whatever it started, synchronously (a PostgreSQL postmaster and its backends). Default: SIGKILL to its pid. */
  kill?: (pid: number) => void;
}

export interface ChildScope {
  /** Registers `child` for killing when this scope ends; returns it. */
  track<T extends ChildProcess>(child: T, o?: TrackOptions): T;
}

interface Tracked {
  kill(): void;
}

interface Scope {
  children: Set<Tracked>;
  /** Its kill has run: a later child goes to the file's scope (a test body vitest abandoned may still be running). */
  done: boolean;
}

interface WorkerChildren {
  file: Scope;
  tests: WeakMap<RunnerTestCase, Scope>;
  /** Every tracked child not seen to exit: the last resort's list. */
  all: Set<Tracked>;
}

// One registry per worker process, on globalThis: the last resort's process listeners are installed once, and
// copies of this module (if a worker ever loaded two) share it.
const REGISTRY = Symbol.for('parley.test.child-processes');

function registry(): WorkerChildren | undefined {
  if (!('__vitest_worker__' in globalThis)) return undefined;
  const g = globalThis as { [REGISTRY]?: WorkerChildren };
  if (!g[REGISTRY]) {
    g[REGISTRY] = { file: { children: new Set(), done: false }, tests: new WeakMap(), all: new Set() };
    installLastResort(g[REGISTRY]);
  }
  return g[REGISTRY];
}

function installLastResort(r: WorkerChildren) {
  const killAll = () => {
    for (const t of r.all) t.kill();
    r.all.clear();
  };
  process.on('exit', killAll);
  process.on('disconnect', killAll);
  // Node's default for SIGTERM ends the process without an 'exit' event: kill first, then die of it as before.
  const onTerm = () => {
    killAll();
    if (process.listenerCount('SIGTERM') === 0) process.kill(process.pid, 'SIGTERM');
  };
  process.once('SIGTERM', onTerm);
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

function killer(child: ChildProcess, o: TrackOptions): () => void {
  const pid = child.pid!;
  return () => {
    try {
      if (o.group) process.kill(-pid, 'SIGKILL');
      else if (exited(child)) return;
      else if (o.kill) o.kill(pid);
      else process.kill(pid, 'SIGKILL');
    } catch {} // gone meanwhile (ESRCH)
  };
}

function killScope(scope: Scope, r: WorkerChildren) {
  for (const t of scope.children) {
    t.kill();
    r.all.delete(t);
  }
  scope.children.clear();
}

function testScope(r: WorkerChildren, test: RunnerTestCase): Scope {
  const known = r.tests.get(test);
  if (known) return known.done ? r.file : known;
  const scope: Scope = { children: new Set(), done: false };
  r.tests.set(test, scope);
  onTestFinished(() => {
    scope.done = true;
    killScope(scope, r);
  });
  return scope;
}

function add<T extends ChildProcess>(r: WorkerChildren, scope: Scope, child: T, o: TrackOptions): T {
  if (child.pid === undefined || exited(child)) return child; // never started (its 'error' says why), or over
  const target = scope.done ? r.file : scope;
  const t: Tracked = { kill: killer(child, o) };
  target.children.add(t);
  r.all.add(t);
  const pid = child.pid;
  if (!o.kill) recordChild(pid, !!o.group); // a custom kill is PostgreSQL's: the teardown reaps it by its data dir
  child.once('exit', () => {
    forgetChild(pid);
    if (o.group) return; // a group may outlive its leader: it stays listed until its scope ends
    target.children.delete(t);
    r.all.delete(t);
  });
  return child;
}

/**
 * The scope a child started now belongs to: the running test, else the file. A helper whose server outlives one
 * spawn (PostgreSQL's restart(), called in a later test on a server made in beforeAll) takes it when the server is made.
 */
export function childScope(): ChildScope {
  const r = registry();
  if (!r) return { track: (child) => child };
  const test = TestRunner.getCurrentTest();
  const scope = test ? testScope(r, test) : r.file;
  return { track: (child, o = {}) => add(r, scope, child, o) };
}

/** Registers `child` with the running test (or the file, from beforeAll / top level); returns it. */
export function trackChild<T extends ChildProcess>(child: T, o: TrackOptions = {}): T {
  return childScope().track(child, o);
}

/** SIGKILLs the children started outside any test since the last call: the setup file's afterAll, once per test file. */
export function killFileChildren(): void {
  const r = registry();
  if (r) killScope(r.file, r);
}
