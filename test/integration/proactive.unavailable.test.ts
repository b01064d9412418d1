// An internal failure (the store write in the guardrail transaction fails) is not
// one of the seven reasons: POST /proactive answers 503 {error:{code:'unavailable'}}.
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { installErrorHandling } from '../../src/http/errors.ts';
import { createProactiveLedger } from '../../src/proactive/ledger.ts';
import { proactivePlugin } from '../../src/proactive/routes.ts';
import { createProactiveService } from '../../src/proactive/service.ts';
import type { Services } from '../../src/services.ts';
import { openTestStore } from '../support/store.ts';

const SECRET = 'unavailable-test-secret-0123456789';
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('POST /proactive on an internal failure', () => {
  it('answers 503 unavailable (not a 200 with an invented reason); blocked answers stay 200', async () => {
    const store = await openTestStore();
    cleanup.push(() => store.close());
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const customers = createCustomerRepo(store, clock);
    await customers.upsert({ externalId: 'ok' });
    await customers.setOptIn('ok', true);
    const proactive = createProactiveService({
      store,
      clock,
      customers,
      ledger: createProactiveLedger({ store, clock, dailyCap: 3, dedupWindowHours: 24 }),
      enabled: () => true,
      deliver: {
        prepare: async (_tx, { request }) => {
          if (request.content === 'fail') throw new Error('MDB_MAP_FULL: mapsize reached');
          return () => undefined;
        },
      },
    });
    const app = Fastify({ logger: false });
    cleanup.push(() => app.close());
    installErrorHandling(app);
    await app.register(proactivePlugin, { services: { secret: SECRET } as Services, proactive });
    const post = (body: unknown) => app.inject({ method: 'POST', url: '/proactive', headers: { authorization: `Bearer ${SECRET}` }, payload: body as object });

    const failed = await post({ customerExternalId: 'ok', channel: 'web', content: 'fail', dedupKey: 'k' });
    expect(failed.statusCode).toBe(503);
    expect(failed.json()).toEqual({ error: { code: 'unavailable', message: expect.any(String) } });
    expect(failed.body).not.toMatch(/MDB_MAP_FULL/);
    // Nothing was reserved: the same key goes through once the store works.
    expect((await post({ customerExternalId: 'ok', channel: 'web', content: 'works', dedupKey: 'k' })).json()).toEqual({
      accepted: true,
      messageId: expect.any(String),
    });
    const blocked = await post({ customerExternalId: 'nobody', channel: 'web', content: 'x' });
    expect(blocked.statusCode).toBe(200);
    expect(blocked.json()).toEqual({ accepted: false, reason: 'Unknown customer' });
  });
});
