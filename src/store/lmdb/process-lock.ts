// One process per data directory. An embedded store shared by two processes loses data: each keeps its own
// counters and caches (two processes on one directory overwrote each other's jobs). The lock is an fcntl write
// lock on `<dir>/parley.lock`, held for the life of the process; the kernel releases it when the process dies,
// however it dies, so a restart after SIGKILL is never refused. The holder writes its pid into the file so the
// refusal can name it.
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { lock } from 'os-lock';
import { StoreOpenError } from '../errors.ts';

export interface ProcessLock {
  release(): void;
}

export async function lockDataDirectory(dir: string): Promise<ProcessLock> {
  const file = join(dir, 'parley.lock');
  const fd = openSync(file, 'a+');
  try {
    await lock(fd, { exclusive: true, immediate: true });
  } catch (err) {
    closeSync(fd);
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    if (code === 'EAGAIN' || code === 'EACCES' || /EAGAIN|EACCES|resource temporarily/i.test(String(err))) {
      throw new StoreOpenError(
        `storage.path ${dir} is in use by another Parley process (${holderOf(file)}): stop it first, or give this one its own storage.path`,
      );
    }
    throw err;
  }
  // The lock is the fcntl lock, not the content: rewriting it in place keeps the holder's own descriptor (closing any
  // descriptor of a file drops a process's fcntl locks on it).
  ftruncateSync(fd, 0);
  writeSync(fd, `${JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() })}\n`, 0);
  return {
    release() {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
    },
  };
}

function holderOf(file: string): string {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as { pid?: number; host?: string; since?: string };
    return `pid ${holder.pid} on ${holder.host}, since ${holder.since}`;
  } catch {
    return 'holder unknown';
  }
}
