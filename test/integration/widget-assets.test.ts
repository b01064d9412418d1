// Issue 4: how the widget bundle is served and sized; which profiles start the
// demo, and who may get a demo session.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { PUBLIC_DIR } from '../../src/app.ts';
import { CONFIG_DIR, parseConfig } from '../../src/config/load.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { LOCALE_BUDGET_GZIP, localeFile } from '../../scripts/build-assets.ts';
import { LOCALE_TABLES } from '../../widget/src/locale-tables.ts';

const open: TestParley[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
});
async function parley(config: Parameters<typeof startParley>[0] = {}) {
  const p = await startParley(config);
  open.push(p);
  return p;
}

describe('GET /widget.js', () => {
  it('JavaScript with caching headers; an ETag revalidates to 304', async () => {
    const p = await parley();
    const r = await fetch(`${p.url()}/widget.js`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('public, max-age=300, must-revalidate');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = r.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+(-br|-gzip)?"$/);
    expect(await r.text()).toBe(readFileSync(join(PUBLIC_DIR, 'widget.js'), 'utf8'));
    const again = await fetch(`${p.url()}/widget.js`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const stale = await fetch(`${p.url()}/widget.js`, { headers: { 'if-none-match': '"0-0"' } });
    expect(stale.status).toBe(200);
  });

  it('served compressed: brotli or gzip as Accept-Encoding allows, same caching headers, an ETag per encoding', async () => {
    const p = await parley();
    const raw = readFileSync(join(PUBLIC_DIR, 'widget.js'));
    const get = (headers: Record<string, string>) => p.app.inject({ method: 'GET', url: '/widget.js', headers });
    const br = await get({ 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('accept-encoding');
    expect(br.headers['cache-control']).toBe('public, max-age=300, must-revalidate');
    expect(br.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(br.rawPayload.length).toBeLessThan(raw.length / 2);
    expect(brotliDecompressSync(br.rawPayload).equals(raw)).toBe(true);
    const gz = await get({ 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(raw)).toBe(true);
    // br refused explicitly (q=0): gzip
    expect((await get({ 'accept-encoding': 'br;q=0, gzip;q=0.5' })).headers['content-encoding']).toBe('gzip');
    const plain = await get({});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(raw)).toBe(true);
    const identity = await get({ 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    // three representations, three ETags; each revalidates only itself
    const tags = new Set([br.headers.etag, gz.headers.etag, plain.headers.etag]);
    expect(tags.size).toBe(3);
    expect((await get({ 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) })).statusCode).toBe(304);
    expect((await get({ 'accept-encoding': 'gzip', 'if-none-match': String(br.headers.etag) })).statusCode).toBe(200);
  });

  it('the built bundle is under 25 KB gzipped', () => {
    const bundle = readFileSync(join(PUBLIC_DIR, 'widget.js'));
    expect(bundle.length).toBeGreaterThan(1000);
    expect(gzipSync(bundle, { level: 9 }).length).toBeLessThan(25 * 1024);
  });
});

describe('the widget languages: English in the bundle, each other language a file of its own', () => {
  const others = Object.keys(LOCALE_TABLES).filter((l) => l !== 'en');

  it('the bundle carries English only, and the content hash of each language file (its URL changes with its words)', () => {
    const bundle = readFileSync(join(PUBLIC_DIR, 'widget.js'), 'utf8');
    // esbuild writes ASCII: other characters as \uXXXX escapes.
    const inBundle = (text: string) =>
      bundle.includes(text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`));
    expect(inBundle(LOCALE_TABLES.en.noticeReconnecting)).toBe(true);
    expect(others).toEqual(['es', 'de', 'fr', 'ar', 'he']);
    for (const lang of others) {
      for (const key of ['noticeSessionEnded', 'openChat', 'errorRateLimited'] as const)
        expect(inBundle(LOCALE_TABLES[lang][key]), `${lang}.${key}`).toBe(false);
      const hash = createHash('sha256')
        .update(readFileSync(join(PUBLIC_DIR, localeFile(lang))))
        .digest('hex')
        .slice(0, 12);
      expect(bundle, lang).toContain(`${lang}:"${hash}"`);
    }
  });

  it('each file is its table as JSON, under 3 KB gzipped', () => {
    for (const lang of others) {
      const file = readFileSync(join(PUBLIC_DIR, localeFile(lang)));
      expect(JSON.parse(file.toString('utf8')), lang).toEqual(LOCALE_TABLES[lang]);
      expect(gzipSync(file, { level: 9 }).length, lang).toBeLessThan(LOCALE_BUDGET_GZIP);
    }
  });

  it('served as JSON to any origin, cached for a year (the widget asks for ?v=<hash>), precompressed; an unknown language is a 404', async () => {
    const p = await parley();
    for (const lang of others) {
      const r = await fetch(`${p.url()}/widget-locale-${lang}.json?v=0123abcd`, { headers: { origin: 'https://shop.example' } });
      expect(r.status, lang).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await r.json()).toEqual(LOCALE_TABLES[lang]);
    }
    const br = await p.app.inject({ method: 'GET', url: '/widget-locale-he.json', headers: { 'accept-encoding': 'br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString('utf8'))).toEqual(LOCALE_TABLES.he);
    const missing = await fetch(`${p.url()}/widget-locale-xx.json`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toMatchObject({ code: expect.any(String) });
  });
});

describe('the demo', () => {
  it('demo.backend is true in config/config.yaml only, among the shipped profiles', () => {
    const profiles = readdirSync(CONFIG_DIR).filter((f) => f.endsWith('.yaml'));
    expect(profiles).toContain('config.yaml');
    expect(profiles.length).toBeGreaterThan(1);
    // The openai profile refuses to load without a key or an endpoint, the cluster profile without a database.
    const withDemo = profiles.filter(
      (f) =>
        parseConfig(readFileSync(join(CONFIG_DIR, f), 'utf8'), { OPENAI_API_KEY: 'sk-test', DATABASE_URL: 'postgres://parley@db:5432/parley' }, f).demo.backend,
    );
    expect(withDemo).toEqual(['config.yaml']);
  });

  it('/demo/session → 404 when the demo is off', async () => {
    const p = await parley();
    const r = await fetch(`${p.url()}/demo/session`);
    expect(r.status).toBe(404);
    expect((await r.json()).error).toMatchObject({ code: expect.any(String) });
  });

  it('/demo/session serves loopback clients only, unless demo.allow_remote_sessions', async () => {
    const p = await parley({ config: { demo: { backend: true } } });
    const local = await fetch(`${p.url()}/demo/session`);
    expect(local.status).toBe(200);
    expect(await local.json()).toMatchObject({ customerId: expect.stringMatching(/^cus_/), authToken: expect.stringMatching(/^v1\./) });
    for (const remoteAddress of ['203.0.113.9', '::ffff:10.0.0.5', '2001:db8::1']) {
      const remote = await p.app.inject({ method: 'GET', url: '/demo/session', remoteAddress });
      expect(remote.statusCode).toBe(403);
      expect(remote.json().error.code).toBe('forbidden');
      expect(remote.body).not.toContain('v1.');
    }
    const open = await parley({ config: { demo: { backend: true, allow_remote_sessions: true } } });
    expect((await open.app.inject({ method: 'GET', url: '/demo/session', remoteAddress: '203.0.113.9' })).statusCode).toBe(200);
  });
});
