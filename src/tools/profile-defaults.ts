// What a command that talks to a running Parley (`parley knowledge import`) falls back on when it is given neither an
// address nor a secret: the profile's own (SERVICE_CONFIG, else config/config.yaml, so PORT counts) and the service
// secret Parley generated in its storage.path, as `parley agents add` does. Read only: nothing is generated here.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config/load.ts';

export function profileDefaults(env: NodeJS.ProcessEnv): { url?: string; secret?: string } {
  let config;
  try {
    config = loadConfig(env).config;
  } catch {
    return {}; // a profile that does not load: the command's own defaults and messages apply
  }
  const host = config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
  const file = join(config.storage.path, 'service-secret');
  const kept = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  return { url, secret: config.secret || kept || undefined };
}
