// A test's child processes die with the test's process: a test that times out must not leave a server running for
// the rest of the day (seen: two Parley processes still up 81 minutes after their tests timed out at 30 s).
// `setpriv --pdeathsig KILL` (util-linux, in every Debian) sets the parent-death signal and then execs the command, so
// the child keeps its pid and gets the test's own signals (SIGKILL, SIGSTOP, SIGTERM) itself.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';

const SETPRIV = '/usr/bin/setpriv';

/** `spawn(command, args, options)`, killed when the process that spawned it dies; its stdout and stderr are piped. */
export function spawnTied(command: string, args: string[], options: SpawnOptions = {}): ChildProcess & { stdout: Readable; stderr: Readable } {
  const child = existsSync(SETPRIV) ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], options) : spawn(command, args, options);
  if (!child.stdout || !child.stderr) throw new Error('spawnTied: stdout and stderr must be piped');
  return child as ChildProcess & { stdout: Readable; stderr: Readable };
}
