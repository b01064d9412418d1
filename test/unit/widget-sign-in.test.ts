// The widget's sign-in (src/identity/widget-sign-in.ts) on a real LMDB store: an identity token of a customer seen
// before costs no store read (the externalId → customerId cache), a new one creates the customer once, and the
// cache stays within its bound.
import { afterEach, describe, expect, it } from 'vitest';
import { signIdentity } from '../../sdk/src/index.ts';
import { createManualClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createCustomerRepo, type CustomerRepo } from '../../src/customers/repo.ts';
import { createVisitors } from '../../src/identity/visitors.ts';
import { createIdentity } from '../../src/identity/index.ts';
import { createWidgetSignIn } from '../../src/identity/widget-sign-in.ts';
import { createLogger } from '../../src/logger.ts';
import type { Services } from '../../src/services.ts';
import { openTestStore, type TestStore } from '../support/store.ts';

const SECRET = 'identity-secret-0123456789abcdef';
const START = Date.UTC(2026, 10, 27, 9, 0, 0);
const stores: TestStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function setup(cacheSize?: number) {
  const store = await openTestStore();
  stores.push(store);
  const clock = createManualClock(START);
  const config = ConfigSchema.parse({ secret: 'service-secret-0123456789', identity: { jwt_secret: SECRET, visitors: true } });
  const services = { config, clock, store, secret: config.secret, logger: createLogger('silent'), telemetry: { event() {} } } as unknown as Services;
  const repo = createCustomerRepo(store, clock);
  const reads: string[] = [];
  const customers: CustomerRepo = Object.assign({}, repo, {
    get: (id: string) => (reads.push(`get ${id}`), repo.get(id)),
    findBy: (kind: 'ext', value: string) => (reads.push(`findBy ${kind} ${value}`), repo.findBy(kind, value)),
    upsert: (f: Parameters<CustomerRepo['upsert']>[0]) => (reads.push(`upsert ${f.externalId}`), repo.upsert(f)),
  });
  const identity = createIdentity(services);
  const signIn = createWidgetSignIn({
    services,
    customers,
    sessionTokens: identity.tokens,
    identityTokens: identity.identityTokens,
    visitorTokens: identity.visitorTokens,
    visitors: createVisitors({ store, customers }),
    cacheSize,
  });
  const token = (externalId: string) => signIdentity({ externalId }, { secret: SECRET, expiresIn: 600, now: START });
  return { signIn, reads, token };
}

describe('widget sign-in with identity tokens', () => {
  it('creates the customer on first sight, then signs them in with no store access', async () => {
    const { signIn, reads, token } = await setup();
    const first = await signIn.signIn({ type: 'init', authToken: token('u-1') }, '10.0.0.1');
    expect(first).toMatchObject({ ok: true, visitor: false, customer: { externalId: 'u-1' } });
    expect(reads).toEqual(['findBy ext u-1', 'upsert u-1']);
    reads.length = 0;
    for (let i = 0; i < 5; i++) {
      const again = await signIn.signIn({ type: 'init', authToken: token('u-1') }, '10.0.0.1');
      expect(again).toEqual(first);
    }
    expect(reads).toEqual([]);
  });

  it('keeps at most cacheSize customers: the oldest is read again', async () => {
    const { signIn, reads, token } = await setup(2);
    for (const id of ['a', 'b', 'c']) await signIn.signIn({ type: 'init', authToken: token(id) }, '10.0.0.1');
    reads.length = 0;
    await signIn.signIn({ type: 'init', authToken: token('c') }, '10.0.0.1');
    expect(reads).toEqual([]);
    await signIn.signIn({ type: 'init', authToken: token('a') }, '10.0.0.1');
    expect(reads).toEqual(['findBy ext a']);
  });
});
