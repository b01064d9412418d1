// The service secret: from config (usually ${SERVICE_SDK_SECRET}), or generated
// once and kept in the data directory so restarts keep the same one.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function resolveSecret(configured: string, storagePath: string): { secret: string; generated: boolean; file?: string } {
  if (configured) return { secret: configured, generated: false };
  const file = join(storagePath, 'service-secret');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept) return { secret: kept, generated: false, file };
  }
  mkdirSync(storagePath, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return { secret, generated: true, file };
}
