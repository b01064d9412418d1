// The run's list of the child processes its workers started (support/child-processes.ts), on disk: a worker that is
// killed outright (SIGKILL, the OOM killer) runs no handler of its own, so the run's global teardown kills what it
// left. One file per child in the directory PARLEY_TEST_CHILDREN names (test/global-setup.ts makes it, workers inherit
// it), holding the child's start time, so a pid the kernel has given to another process since is never signalled.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CHILDREN_DIR_ENV = 'PARLEY_TEST_CHILDREN';

/** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or undefined when it is gone or a zombie. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** Notes a child just started (`group`: spawned detached, its process group goes with it). No-op outside a test run. */
export function recordChild(pid: number, group: boolean): void {
  const dir = process.env[CHILDREN_DIR_ENV];
  const started = startTime(pid);
  if (!dir || started === undefined) return;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, String(pid)), JSON.stringify({ started, group }));
  } catch {} // the run is ending: its teardown is under way
}

export function forgetChild(pid: number): void {
  const dir = process.env[CHILDREN_DIR_ENV];
  if (dir) rmSync(join(dir, String(pid)), { force: true });
}

/** SIGKILLs every listed child still running as the same process (synchronously); returns their pids. */
export function killListedChildren(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    try {
      const entry = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { started: string; group: boolean };
      if (startTime(pid) !== entry.started) continue;
      process.kill(entry.group ? -pid : pid, 'SIGKILL');
      killed.push(pid);
    } catch {} // half-written, or gone meanwhile
  }
  return killed;
}
