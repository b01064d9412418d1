// The service secret: from config (usually ${SERVICE_SDK_SECRET}), or generated
// once and kept in the data directory so restarts keep the same one.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config/schema.ts';
import { mcpSecrets } from './config/mcp-schema.ts';

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

/** Every secret the configuration holds, with the resolved service secret: scrubbed by value from logs and public answers. */
export function configuredSecrets(config: Config, serviceSecret: string): string[] {
  const wa = config.channels.whatsapp;
  return [
    serviceSecret,
    config.identity.token_secret,
    config.identity.jwt_secret,
    config.identity.jwt_previous_secret,
    wa.token,
    wa.app_secret,
    wa.verify_token,
    config.llm.api_key,
    config.llm.fallback?.api_key ?? '',
    ...config.webhooks.map((w) => w.secret),
    ...mcpSecrets(config.tools.mcp),
  ].filter(Boolean);
}
