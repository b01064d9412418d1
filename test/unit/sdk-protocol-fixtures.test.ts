// The wire frames both SDKs must agree on (test/fixtures/protocol/*.json): each valid frame parses with the Node SDK's
// zod schema (to at least its `parsed` form: defaults applied) and each invalid one is refused. The Python SDK's
// tests (sdk-python/tests/test_protocol_fixtures.py) read the same files with its pydantic models.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as protocol from '../../sdk/src/protocol.ts';
import { signIdentity, type IdentityFields } from '../../sdk/src/identity.ts';
import { signWebhook, verifyWebhook } from '../../sdk/src/webhook-signature.ts';

const DIR = join(import.meta.dirname, '../fixtures/protocol');

interface Fixture {
  schema: string;
  direction: 'client' | 'server';
  valid: { input: unknown; parsed?: unknown }[];
  invalid: unknown[];
}

const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
const schemas = protocol as unknown as Record<string, z.ZodType>;

describe('protocol fixtures shared with the Python SDK', () => {
  it('cover every frame kind of both directions', () => {
    const kinds = files.flatMap((f) => (JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Fixture).valid.map((v) => (v.input as { type: string }).type));
    expect(new Set(kinds)).toEqual(
      new Set(['register', 'result', 'sent', 'ingest', 'summary', 'error', 'registered', 'invoke', 'send', 'ack', 'handoff', 'customer_message', 'summarize']),
    );
  });

  for (const file of files) {
    const fixture = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as Fixture;
    const schema = schemas[fixture.schema];
    const union = fixture.direction === 'client' ? protocol.ClientFrame : protocol.ServerFrame;
    it(`${file}: valid frames parse, invalid ones are refused`, () => {
      expect(schema, `protocol.ts has no ${fixture.schema}`).toBeDefined();
      expect(fixture.valid.length).toBeGreaterThan(0);
      expect(fixture.invalid.length).toBeGreaterThan(0);
      for (const { input, parsed } of fixture.valid) {
        const r = schema.safeParse(input);
        expect(r.success, JSON.stringify(input)).toBe(true);
        expect(r.data).toMatchObject((parsed ?? input) as object);
        expect(union.safeParse(input).success).toBe(true);
      }
      for (const input of fixture.invalid) {
        expect(schema.safeParse(input).success, `accepted ${JSON.stringify(input)}`).toBe(false);
        expect(union.safeParse(input).success, `the union accepted ${JSON.stringify(input)}`).toBe(false);
      }
    });
  }
});

describe('signature fixtures shared with the Python SDK', () => {
  it('webhook-signature.json: signWebhook reproduces the header and verifyWebhook accepts it', () => {
    const f = JSON.parse(readFileSync(join(DIR, 'signatures/webhook-signature.json'), 'utf8')) as { secret: string; t: number; body: string; header: string };
    expect(signWebhook(f.secret, f.body, f.t)).toBe(f.header);
    expect(verifyWebhook(f.body, f.header, f.secret, { now: f.t * 1000 }).id).toBe('evt_1');
  });

  it('webhook-handoff-offline.json: verifyWebhook accepts the opt-in handoff.offline event (signed by signWebhook) with its since', () => {
    const f = JSON.parse(readFileSync(join(DIR, 'signatures/webhook-handoff-offline.json'), 'utf8')) as {
      secret: string;
      t: number;
      body: string;
      header: string;
    };
    expect(signWebhook(f.secret, f.body, f.t)).toBe(f.header);
    const event = verifyWebhook(f.body, f.header, f.secret, { now: f.t * 1000 });
    expect(event).toEqual(JSON.parse(f.body));
    expect(event).toMatchObject({ type: 'handoff.offline', data: { since: 1795770000000, waitedMinutes: 10 } });
  });

  it('identity-tokens.json: signIdentity reproduces each token byte for byte (the Python SDK checks sign_identity too)', () => {
    const f = JSON.parse(readFileSync(join(DIR, 'signatures/identity-tokens.json'), 'utf8')) as {
      cases: { fields: IdentityFields; expiresIn: number; secret: string; nowSeconds: number; token: string }[];
    };
    expect(f.cases.length).toBeGreaterThan(0);
    for (const c of f.cases) {
      expect(signIdentity(c.fields, { secret: c.secret, expiresIn: c.expiresIn, now: c.nowSeconds * 1000 }), c.fields.externalId).toBe(c.token);
    }
  });
});
