// Loads a YAML profile, resolves ${ENV} references, validates with the one
// schema. Every failure is a ConfigError whose message names the key path.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { findProjectRoot } from '../project-root.ts';
import { ConfigSchema, type Config } from './schema.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));
export const CONFIG_DIR = join(PROJECT_ROOT, 'config');

/** `SERVICE_CONFIG` is a path, or a bare profile name looked up in config/ (with or without `.yaml`). */
export function resolveConfigPath(selector: string | undefined, cwd = process.cwd()): string {
  if (!selector) return join(CONFIG_DIR, 'config.yaml');
  const looksLikePath = selector.includes('/') || selector.includes('\\');
  if (looksLikePath) return isAbsolute(selector) ? selector : resolve(cwd, selector);
  for (const name of [selector, `${selector}.yaml`, `config.${selector}.yaml`]) {
    const candidate = join(CONFIG_DIR, name);
    if (existsSync(candidate)) return candidate;
  }
  const local = resolve(cwd, selector);
  if (existsSync(local)) return local;
  throw new ConfigError(`SERVICE_CONFIG: no profile "${selector}" in ${CONFIG_DIR} and no such file`);
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces ${NAME} and ${NAME:-default} in every string; a missing variable is an error naming the key. */
export function resolveEnvRefs(value: unknown, env: NodeJS.ProcessEnv, path: string[] = [], optional?: (path: string) => boolean): unknown {
  if (typeof value === 'string') {
    let missing: string | undefined;
    const out = value.replace(ENV_REF, (_, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      if (optional?.(path.join('.'))) return '';
      missing = name;
      return '';
    });
    if (missing) throw new ConfigError(`${path.join('.')}: environment variable ${missing} is not set`);
    // Always a string (an id like WA_PHONE_ID=106540352242922 must stay one); the schema
    // converts only where it wants a number or a boolean.
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveEnvRefs(v, env, [...path, String(i)], optional));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveEnvRefs(v, env, [...path, k], optional)]));
  }
  return value;
}

function formatIssue(issue: { path: PropertyKey[]; message: string; code?: string; keys?: string[] }): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    return issue.keys.map((k) => `${path ? `${path}.` : ''}${k}: unknown key`).join('; ');
  }
  return `${path || '(root)'}: ${issue.message}`;
}

export interface LoadedConfig {
  config: Config;
  path: string;
}

// Keys whose env reference may be missing: the feature that needs them checks
// at start-up and says so (e.g. WhatsApp credentials only matter when enabled).
const OPTIONAL_ENV_KEYS = new Set([
  'secret',
  'llm.api_key',
  'llm.base_url',
  'llm.fallback.api_key',
  'llm.fallback.base_url',
  'identity.token_secret',
  'identity.jwt_secret',
  'identity.jwt_previous_secret',
  'channels.whatsapp.phone_id',
  'channels.whatsapp.token',
  'channels.whatsapp.verify_token',
  'channels.whatsapp.app_secret',
]);

/** `identity.jwt_secret` defaults to ${SERVICE_IDENTITY_SECRET} (unset → empty → identity tokens are not accepted). */
function withIdentitySecretDefault(doc: Record<string, unknown>): Record<string, unknown> {
  const identity = doc.identity;
  if (identity !== undefined && (typeof identity !== 'object' || identity === null || Array.isArray(identity))) return doc;
  if (identity && 'jwt_secret' in identity) return doc;
  return Object.assign({}, doc, { identity: Object.assign({ jwt_secret: '${SERVICE_IDENTITY_SECRET}' }, identity) });
}

export function parseConfig(text: string, env: NodeJS.ProcessEnv, source = 'config'): Config {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new ConfigError(`${source}: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${source}: the top level must be a mapping`);
  // `secret` defaults to ${SERVICE_SDK_SECRET}: a profile without the key still honours the variable
  // (unset → empty → a secret generated once and kept in the data directory).
  const doc = raw as Record<string, unknown>;
  const withDefaults = withIdentitySecretDefault('secret' in doc ? doc : { secret: '${SERVICE_SDK_SECRET}', ...doc });
  const resolved = resolveEnvRefs(withDefaults, env, [], (p) => OPTIONAL_ENV_KEYS.has(p));
  const result = ConfigSchema.safeParse(resolved);
  if (!result.success) throw new ConfigError(result.error.issues.map((i) => formatIssue(i as never)).join('; '));
  return result.data;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const path = resolveConfigPath(env.SERVICE_CONFIG, cwd);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`SERVICE_CONFIG: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const config = parseConfig(text, env, path);
  // Relative storage paths are relative to the working directory, like any CLI.
  if (!isAbsolute(config.storage.path)) config.storage.path = resolve(cwd, config.storage.path);
  return { config, path };
}
