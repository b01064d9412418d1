// A child started with spawnTied dies when the process that started it is killed (SIGKILL: no handler of its own runs).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// The middle process starts a tied child that would run forever, prints its pid, and waits.
const MIDDLE = `
import { spawnTied } from ${JSON.stringify(join(PROJECT_ROOT, 'test/support/tied-spawn.ts'))};
const child = spawnTied(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
console.log('child', child.pid);
setInterval(() => {}, 1000);
`;

describe('spawnTied', () => {
  it('the child is killed when its parent is SIGKILLed', async () => {
    const middle = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', MIDDLE], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      let out = '';
      middle.stdout.on('data', (d) => {
        out += d;
        const m = /child (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      middle.on('exit', (code) => reject(new Error(`the middle process exited with ${code}: ${out}`)));
    });
    try {
      expect(alive(pid)).toBe(true);
      middle.kill('SIGKILL');
      const deadline = Date.now() + 15_000;
      while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      middle.kill('SIGKILL');
    }
  }, 60_000);
});
