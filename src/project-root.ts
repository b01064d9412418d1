// The project's root directory (config/, public/build/, package.json), found from this module's own place by
// walking up to Parley's package.json: the same answer from src/ under tsx and from the built dist/main.js.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'parley') return dir;
    if (dirname(dir) === dir) throw new Error(`parley: no package.json named "parley" above ${start}`);
  }
}

export function readVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}
