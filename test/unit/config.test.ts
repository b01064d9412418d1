import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig, resolveConfigPath, CONFIG_DIR } from '../../src/config/load.ts';

describe('config', () => {
  it('the embedded default profile loads with no environment at all', () => {
    const { config, path } = loadConfig({}, tmpdir());
    expect(path).toBe(join(CONFIG_DIR, 'config.yaml'));
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 3000 });
    expect(config.secret).toBe('');
    expect(config.llm.provider).toBe('offline');
    expect(config.identity.session_ttl_minutes).toBe(60);
    expect(config.channels.whatsapp.webhook_path).toBe('/wa/webhook');
    expect(config.server.request_timeout_ms).toBe(30_000);
  });

  it('resolves bare profile names in config/ and paths relative to cwd', () => {
    expect(resolveConfigPath('config.proactive.yaml')).toBe(join(CONFIG_DIR, 'config.proactive.yaml'));
    expect(resolveConfigPath('proactive')).toBe(join(CONFIG_DIR, 'config.proactive.yaml'));
    expect(resolveConfigPath('followup')).toBe(join(CONFIG_DIR, 'config.followup.yaml'));
    expect(resolveConfigPath('./x/y.yaml', '/tmp')).toBe('/tmp/x/y.yaml');
    expect(() => resolveConfigPath('nope')).toThrow(/SERVICE_CONFIG: no profile "nope"/);
  });

  it('the proactive and followup profiles turn their features on', () => {
    expect(loadConfig({ SERVICE_CONFIG: 'config.proactive.yaml' }).config.proactive).toMatchObject({ enabled: true, daily_cap: 3, dedup_window_hours: 24 });
    const f = loadConfig({ SERVICE_CONFIG: 'config.followup.yaml' }).config;
    expect(f.daemon).toMatchObject({ enabled: true, proactive_followup: true });
    expect(f.proactive.enabled).toBe(true);
  });

  it('env values stay strings; number and boolean keys convert them', () => {
    const c = parseConfig(
      'server:\n  port: ${PORT}\nsecret: ${S}\nidentity:\n  allow_anonymous: ${ANON}\nchannels:\n  whatsapp:\n    phone_id: ${WA_PHONE_ID}\n    verify_token: ${WA_VERIFY_TOKEN}\n',
      { PORT: '4100', S: '1234567890123456', ANON: 'true', WA_PHONE_ID: '106540352242922', WA_VERIFY_TOKEN: 'true' },
    );
    expect(c.server.port).toBe(4100);
    expect(c.identity.allow_anonymous).toBe(true);
    expect(c.secret).toBe('1234567890123456');
    expect(c.channels.whatsapp.phone_id).toBe('106540352242922');
    expect(c.channels.whatsapp.verify_token).toBe('true');
    expect(parseConfig('identity:\n  allow_anonymous: ${ANON}\n', { ANON: 'false' }).identity.allow_anonymous).toBe(false);
    expect(parseConfig('llm:\n  model: ${M}\n  temperature: ${T}\n', { M: '42', T: '0.5' }).llm).toMatchObject({ model: '42', temperature: 0.5 });
  });

  it('YAML-native numbers and booleans still work; loose strings are refused naming the key', () => {
    const c = parseConfig('server:\n  port: 4200\n  trust_proxy: true\nproactive:\n  daily_cap: 0\n', {});
    expect(c.server).toMatchObject({ port: 4200, trust_proxy: true });
    expect(c.proactive.daily_cap).toBe(0);
    expect(() => parseConfig('server:\n  port: abc\n', {})).toThrow(/^server\.port: .*expected number/);
    expect(() => parseConfig('server:\n  port: ${P}\n', { P: 'abc' })).toThrow(/^server\.port: /);
    expect(() => parseConfig('server:\n  port:\n', {})).toThrow(/^server\.port: /);
    expect(() => parseConfig('identity:\n  allow_anonymous: ${A}\n', { A: 'yes' })).toThrow(/^identity\.allow_anonymous: .*expected boolean/);
    expect(() => parseConfig('identity:\n  allow_anonymous: ${A}\n', { A: '1' })).toThrow(/^identity\.allow_anonymous: /);
    expect(() => parseConfig('server:\n  port: abc\n', {})).not.toThrow(/\n/);
  });

  it('secret defaults to ${SERVICE_SDK_SECRET} when the profile has no secret key', () => {
    expect(parseConfig('server:\n  port: 1\n', { SERVICE_SDK_SECRET: 'from-env-0123456789' }).secret).toBe('from-env-0123456789');
    expect(parseConfig('server:\n  port: 1\n', {}).secret).toBe(''); // → generated once at start-up
    expect(parseConfig('secret: explicit-0123456789\n', { SERVICE_SDK_SECRET: 'from-env-0123456789' }).secret).toBe('explicit-0123456789');
    expect(parseConfig('', { SERVICE_SDK_SECRET: '9876543210987654' }).secret).toBe('9876543210987654');
  });

  it('identity.jwt_secret defaults to ${SERVICE_IDENTITY_SECRET}; the identity keys have their documented defaults', () => {
    const env = { SERVICE_IDENTITY_SECRET: 'identity-env-0123456789' };
    expect(parseConfig('server:\n  port: 1\n', env).identity.jwt_secret).toBe('identity-env-0123456789');
    expect(parseConfig('identity:\n  visitors: true\n', env).identity).toMatchObject({ jwt_secret: 'identity-env-0123456789', visitors: true });
    expect(parseConfig('identity:\n  jwt_secret: explicit-0123456789abc\n', env).identity.jwt_secret).toBe('explicit-0123456789abc');
    expect(parseConfig('', {}).identity).toMatchObject({
      jwt_secret: '',
      jwt_previous_secret: '',
      jwt_max_lifetime_hours: 24,
      visitors: false,
      visitor_token_ttl_days: 365,
      visitor_messages_per_minute: 10,
      visitor_messages_per_ip_per_minute: 60,
      visitor_creations_per_ip_per_minute: 10,
    });
    expect(() => parseConfig('identity:\n  jwt_secret: short\n', {})).toThrow(/identity\.jwt_secret/);
  });

  it('a missing variable names the key path', () => {
    expect(() => parseConfig('llm:\n  model: ${MODEL_NAME}\n', {})).toThrow('llm.model: environment variable MODEL_NAME is not set');
    expect(parseConfig('llm:\n  model: ${MODEL_NAME:-m1}\n', {}).llm.model).toBe('m1');
  });

  it('a wrong value names the key path and the problem', () => {
    expect(() => parseConfig('server:\n  port: "eighty"\n', {})).toThrow(/^server\.port: /);
    expect(() => parseConfig('llm:\n  provider: gpt\n', {})).toThrow(/^llm\.provider: Invalid option/);
    expect(() => parseConfig('proactive:\n  daily_cap: -1\n', {})).toThrow(/^proactive\.daily_cap: /);
  });

  it('handoff (issue 35): offline after 10 min, never handed back by default; the old idle_minutes is refused with the advice; business hours checked', () => {
    const c = parseConfig('{}\n', {});
    expect(c.handoff.offline_after_minutes).toBe(10);
    expect(c.handoff.return_to_assistant_after_minutes).toBeUndefined();
    expect(c.handoff.business_hours).toBeUndefined();
    expect(parseConfig('handoff:\n  return_to_assistant_after_minutes: "45"\n', {}).handoff.return_to_assistant_after_minutes).toBe(45);
    expect(() => parseConfig('handoff:\n  idle_minutes: 30\n', {})).toThrow(/^handoff\.idle_minutes: .*return_to_assistant_after_minutes/);
    expect(() => parseConfig('handoff:\n  business_hours:\n    time_zone: Nowhere/Land\n    weekly: {}\n', {})).toThrow(
      /^handoff\.business_hours\.time_zone: /,
    );
    const bh = parseConfig('handoff:\n  business_hours:\n    time_zone: Europe/Berlin\n    weekly:\n      mon: ["09:00-17:00"]\n', {}).handoff.business_hours;
    expect(bh).toEqual({ time_zone: 'Europe/Berlin', weekly: { mon: [{ from: 540, to: 1020 }] }, closed_dates: [] });
  });

  it('unknown keys are errors, named in full', () => {
    expect(() => parseConfig('server:\n  prot: 3000\n', {})).toThrow('server.prot: unknown key');
    expect(() => parseConfig('bogus: 1\n', {})).toThrow('bogus: unknown key');
  });

  it('invalid YAML is one clear line', () => {
    try {
      parseConfig('server: [\n', {}, 'x.yaml');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/^x\.yaml: invalid YAML/);
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('a profile file that cannot be read names SERVICE_CONFIG', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    expect(() => loadConfig({ SERVICE_CONFIG: join(dir, 'missing.yaml') })).toThrow(/SERVICE_CONFIG: cannot read/);
    writeFileSync(join(dir, 'ok.yaml'), 'storage:\n  path: rel/data\n');
    expect(loadConfig({ SERVICE_CONFIG: join(dir, 'ok.yaml') }, dir).config.storage.path).toBe(join(dir, 'rel/data'));
  });

  // Issue 15 part 9.
  describe('the WhatsApp channel in every shipped profile', () => {
    const profiles = readdirSync(CONFIG_DIR).filter((f) => f.endsWith('.yaml'));
    const credentials = {
      WA_PHONE_ID: '106540352242922',
      WA_TOKEN: 'EAAG-token-0123456789',
      WA_VERIFY_TOKEN: 'verify-me',
      WA_APP_SECRET: 'app-secret-0123456789',
    };
    // The openai profile refuses to start without a key (issue 15 part 6), the cluster profile without a database: give them one.
    const load = (profile: string, env: Record<string, string>) =>
      loadConfig(
        Object.assign({ SERVICE_CONFIG: profile, OPENAI_API_KEY: 'sk-test-0123456789', DATABASE_URL: 'postgres://parley@db:5432/parley' }, env),
        tmpdir(),
      ).config.channels.whatsapp;

    it('is on when WA_PHONE_ID, WA_TOKEN, WA_VERIFY_TOKEN and WA_APP_SECRET are all set, with the credentials from them', () => {
      expect(profiles.length).toBeGreaterThanOrEqual(4);
      for (const profile of profiles) {
        expect(load(profile, credentials), profile).toMatchObject({
          enabled: true,
          provider: 'meta',
          phone_id: credentials.WA_PHONE_ID,
          token: credentials.WA_TOKEN,
          verify_token: credentials.WA_VERIFY_TOKEN,
          app_secret: credentials.WA_APP_SECRET,
        });
        expect(load(profile, Object.assign({ WA_ENABLED: 'true' }, credentials)).enabled, `${profile} WA_ENABLED=true`).toBe(true);
      }
    });

    it('stays off when any of the four is missing, or when WA_ENABLED=false', () => {
      for (const profile of profiles) {
        expect(load(profile, {}).enabled, `${profile} without credentials`).toBe(false);
        expect(load(profile, Object.assign({ WA_ENABLED: 'false' }, credentials)).enabled, `${profile} WA_ENABLED=false`).toBe(false);
        for (const name of Object.keys(credentials)) {
          const without = Object.fromEntries(Object.entries(credentials).filter(([k]) => k !== name));
          expect(load(profile, without).enabled, `${profile} without ${name}`).toBe(false);
          expect(load(profile, Object.assign({}, credentials, { [name]: '' })).enabled, `${profile} with ${name} empty`).toBe(false);
        }
      }
    });

    it('`auto` in any profile means the same; a profile without the key keeps the channel off; other values are refused', () => {
      const yaml = (enabled: string) =>
        `channels:\n  whatsapp:\n    enabled: ${enabled}\n    phone_id: p\n    token: t\n    verify_token: v\n    app_secret: a\n`;
      expect(parseConfig(yaml('auto'), {}).channels.whatsapp.enabled).toBe(true);
      expect(parseConfig(yaml('false'), {}).channels.whatsapp.enabled).toBe(false);
      expect(parseConfig('channels:\n  whatsapp:\n    verify_token: v\n', {}).channels.whatsapp.enabled).toBe(false);
      expect(parseConfig('channels:\n  whatsapp:\n    enabled: auto\n    verify_token: v\n', {}).channels.whatsapp.enabled).toBe(false);
      expect(() => parseConfig(yaml('maybe'), {})).toThrow(/^channels\.whatsapp\.enabled: /);
    });
  });

  // Issue 15 part 6.
  describe('settings that cannot work are refused at start-up', () => {
    it('a service secret (or token_secret) shorter than 16 characters', () => {
      expect(() => parseConfig('secret: short-secret-15\n', {})).toThrow(/^secret: the service secret must be at least 16 characters/);
      expect(() => parseConfig('', { SERVICE_SDK_SECRET: 'abc' })).toThrow(/^secret: /);
      expect(parseConfig('secret: exactly-16-chars\n', {}).secret).toBe('exactly-16-chars');
      expect(() => parseConfig('identity:\n  token_secret: tiny\n', {})).toThrow(/^identity\.token_secret: .*at least 16 characters/);
      expect(parseConfig('identity:\n  token_secret: ""\n', {}).identity.token_secret).toBe('');
    });

    it('provider openai with neither base_url nor api_key (primary or fallback); either one is enough', () => {
      expect(() => parseConfig('llm:\n  provider: openai\n', {})).toThrow(/^llm\.api_key: provider "openai" needs api_key/);
      expect(() => parseConfig('llm:\n  provider: openai\n  base_url: ${U}\n  api_key: ${K}\n', {})).toThrow(/^llm\.api_key: /);
      expect(parseConfig('llm:\n  provider: openai\n  api_key: sk-1\n', {}).llm.base_url).toBeUndefined();
      expect(parseConfig('llm:\n  provider: openai\n  base_url: http://127.0.0.1:11434/v1\n', {}).llm.api_key).toBe('');
      expect(() => parseConfig('llm:\n  fallback:\n    provider: openai\n', {})).toThrow(/^llm\.fallback\.api_key: /);
      expect(() => parseConfig('llm:\n  provider: openai\n  base_url: not-a-url\n', {})).toThrow(/^llm\.base_url: /);
    });

    it('the shipped openai profile: OPENAI_API_KEY or OPENAI_BASE_URL is required', () => {
      expect(() => loadConfig({ SERVICE_CONFIG: 'openai' }, tmpdir())).toThrow(/^llm\.api_key: provider "openai" needs api_key/);
      expect(loadConfig({ SERVICE_CONFIG: 'openai', OPENAI_API_KEY: 'sk-x' }, tmpdir()).config.llm).toMatchObject({ api_key: 'sk-x', base_url: undefined });
      expect(loadConfig({ SERVICE_CONFIG: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, tmpdir()).config.llm.base_url).toBe(
        'http://127.0.0.1:11434/v1',
      );
    });
  });

  it('storage.engine defaults to lmdb; postgres takes storage.url (required, a postgres:// URL) and storage.pool_size', () => {
    expect(parseConfig('', {}).storage).toMatchObject({ engine: 'lmdb', pool_size: 10 });
    expect(parseConfig('', {}).storage.url).toBeUndefined();
    const c = parseConfig('storage:\n  engine: postgres\n  url: ${DATABASE_URL}\n  pool_size: ${POOL}\n', {
      DATABASE_URL: 'postgres://parley:pw@db:5432/parley',
      POOL: '20',
    });
    expect(c.storage).toMatchObject({ engine: 'postgres', url: 'postgres://parley:pw@db:5432/parley', pool_size: 20 });
    expect(parseConfig('storage:\n  engine: postgres\n  url: postgresql://db/parley\n', {}).storage.url).toBe('postgresql://db/parley');
    expect(() => parseConfig('storage:\n  engine: postgres\n', {})).toThrow(/^storage\.url: required with storage\.engine: postgres/);
    expect(() => parseConfig('storage:\n  engine: postgres\n  url: mysql://db/x\n', {})).toThrow(/^storage\.url: expected a postgres:\/\/ URL/);
    expect(() => parseConfig('storage:\n  engine: redis\n', {})).toThrow(/^storage\.engine: /);
    expect(() => parseConfig('storage:\n  pool_size: 0\n', {})).toThrow(/^storage\.pool_size: /);
  });
});
