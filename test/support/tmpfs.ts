// A really full filesystem for tests: a small tmpfs (mounting needs root, as CI has) and a ballast file that fills it.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tempDir } from './tmp.ts';

export const isRoot = process.getuid?.() === 0;

/** Mounts a tmpfs of `sizeMb`; `onCleanup` receives what unmounts and removes it. */
export function mountTmpfs(sizeMb: number, onCleanup: (fn: () => void) => void): string {
  const dir = tempDir('parley-tmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  onCleanup(() => {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      /* already gone */
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the filesystem with one file until a write fails, then gives back `leaveKb`. */
export function fillUp(path: string, leaveKb: number): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    /* full */
  }
  closeSync(fd);
  truncateSync(path, Math.max(0, statSync(path).size - leaveKb * 1024));
}
