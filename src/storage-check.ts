// Before the store opens: can Parley write to `storage.path` at all? lmdb-js reports a read-only
// directory as "ENOENT: no such file or directory, mkdir" (or "Read-only file system: Attempting
// to setup locks"); this names the real cause, in one line an operator can act on.
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export class StorageNotWritableError extends Error {
  override name = 'StorageNotWritableError';
}

function describe(path: string, where: string, err: NodeJS.ErrnoException): string {
  const at = where === path ? path : `${path} (checked ${where}, the nearest existing directory)`;
  switch (err.code) {
    case 'EROFS':
      return `storage.path ${at} is on a read-only file system: mount it read-write, or point storage.path at a writable directory`;
    case 'EACCES':
    case 'EPERM':
      return `storage.path ${at} is read-only for this user (uid ${process.getuid?.() ?? '?'}): give it write permission, or point storage.path at a writable directory`;
    case 'ENOTDIR':
    case 'EEXIST':
      return `storage.path ${at} is not a directory`;
    default:
      return `storage.path ${at} cannot be written (${err.code ?? err.message})`;
  }
}

/** Creates `path` if needed; throws StorageNotWritableError naming the cause when Parley cannot write there. */
export function assertStorageWritable(path: string): void {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const check = (target: string, mode: number) => {
    try {
      accessSync(target, mode);
    } catch (err) {
      throw new StorageNotWritableError(describe(path, target, err as NodeJS.ErrnoException));
    }
  };
  if (!statSync(existing).isDirectory()) throw new StorageNotWritableError(describe(path, existing, Object.assign(new Error(), { code: 'ENOTDIR' })));
  check(existing, constants.W_OK | constants.X_OK);
  try {
    mkdirSync(path, { recursive: true });
  } catch (err) {
    throw new StorageNotWritableError(describe(path, path, err as NodeJS.ErrnoException));
  }
  // The environment's own files, when they exist, must be writable too.
  for (const file of ['data.mdb', 'lock.mdb']) if (existsSync(`${path}/${file}`)) check(`${path}/${file}`, constants.R_OK | constants.W_OK);
}
