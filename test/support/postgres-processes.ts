// Signals to a test PostgreSQL's processes, and clean-up of what a killed one leaves behind.
// Every PostgreSQL backend calls setsid(), so a process-group signal cannot reach them: the
// postmaster's children are found in /proc (Linux) instead.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Running, not a zombie (a killed child that init has not reaped yet is gone for our purposes). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {} // the process ended while we looked
  }
  return children;
}

function send(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal);
  } catch {}
}

/**
 * SIGKILL, SIGSTOP and SIGCONT go to the postmaster and every child (a postmaster cannot relay
 * them); any other signal to the postmaster alone, which handles it (SIGTERM smart, SIGINT fast,
 * SIGQUIT immediate shutdown, SIGHUP reload).
 */
export function signalPostgres(postmaster: number, signal: NodeJS.Signals): number[] {
  if (signal === 'SIGCONT') {
    const children = childrenOf(postmaster);
    for (const child of children) send(child, signal);
    send(postmaster, signal);
    return children;
  }
  if (signal === 'SIGKILL' || signal === 'SIGSTOP') {
    // Frozen first, so it forks nobody between the listing and the signal; children are listed
    // before the postmaster dies, since its death hands them to init.
    send(postmaster, 'SIGSTOP');
    const children = childrenOf(postmaster);
    for (const child of children) send(child, signal);
    send(postmaster, signal);
    return children;
  }
  send(postmaster, signal);
  return [];
}

/**
 * Resolves once none of `pids` runs. A SIGKILLed process is not gone the moment its signal is sent: the kernel
 * tears it down (a backend's share of the shared memory too) a little later, after its postmaster may have exited.
 */
export async function waitPidsGone(pids: number[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const left = pids.filter(running);
    if (left.length === 0) return;
    if (Date.now() > until) throw new Error(`PostgreSQL processes still running ${timeoutMs} ms after SIGKILL: ${left.join(', ')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface PidFile {
  pid: number;
  shm?: { key: number; id: number };
}

function readPidFile(dataDir: string): PidFile | undefined {
  try {
    const lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    const [key, id] = (lines[6] ?? '').trim().split(/\s+/).map(Number);
    return { pid: Number(lines[0]), shm: Number.isInteger(key) && Number.isInteger(id) ? { key, id } : undefined };
  } catch {
    return undefined;
  }
}

/** The number of processes attached to the segment, or undefined when it is gone (or is not the one the pid file names). */
function attached(shm: { key: number; id: number }): number | undefined {
  try {
    const hex = `0x${shm.key.toString(16).padStart(8, '0')}`;
    // Columns: key shmid owner perms bytes nattch status
    for (const line of execFileSync('ipcs', ['-m'], { encoding: 'utf8' }).split('\n')) {
      const cols = line.trim().split(/\s+/);
      if (cols[0] === hex && Number(cols[1]) === shm.id) return Number(cols[5]);
    }
  } catch {}
  return undefined;
}

/**
 * After a SIGKILL the postmaster's small System V shared memory segment outlives it (the next start
 * would remove it). Removed here once nothing is attached (killed children take a moment to go).
 */
async function removeSharedMemory(shm: { key: number; id: number }) {
  const until = Date.now() + 5_000;
  for (let n = attached(shm); n !== undefined; n = attached(shm)) {
    if (n === 0) {
      try {
        execFileSync('ipcrm', ['-m', String(shm.id)], { stdio: 'ignore' });
      } catch {}
      return;
    }
    if (Date.now() > until) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether `pid` is a postgres server started on `dataDir` (not another process that reuses a stale pid). */
function isServerOf(pid: number, dataDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dataDir);
  } catch {
    return false;
  }
}

/**
 * Leaves nothing of a server on `dataDir`: SIGKILLs it if it still runs (a test that never called
 * close()), then removes the shared memory a killed server leaves. Returns whether a server was running.
 */
export async function reapPostgres(dataDir: string): Promise<boolean> {
  const pidFile = readPidFile(dataDir);
  if (!pidFile) return false;
  const running = alive(pidFile.pid) && isServerOf(pidFile.pid, dataDir);
  if (running) signalPostgres(pidFile.pid, 'SIGKILL');
  if (pidFile.shm) await removeSharedMemory(pidFile.shm);
  return running;
}

/** Data directories of test servers under `root` (a run's TMPDIR): `<root>/<parley-pg-…>/data`. */
export function postgresDataDirsUnder(root: string): string[] {
  try {
    return readdirSync(root)
      .filter((name) => name.startsWith('parley-pg-'))
      .map((name) => join(root, name, 'data'))
      .filter((dir) => existsSync(join(dir, 'PG_VERSION')));
  } catch {
    return [];
  }
}
