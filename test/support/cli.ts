// The `parley` command as an integrator runs it: src/main.ts under tsx in a child process, from the project root.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { trackChild } from './child-processes.ts';

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `parley ...args` with `env` over this process's environment; resolves with its exit code and output. */
export function runParleyCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = trackChild(
      spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'src/main.ts'), ...args], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}
