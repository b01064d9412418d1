// The outbound worker's memory of send markers whose write failed (`unsentMarkers`): on a real PostgreSQL store behind
// a proxy that loses the answer to the marker's INSERT (the statement runs and commits, then the connection breaks),
// the marker's write rejects, so no request goes out; the marker is in the database all the same. The next run must
// not take it for an unanswered send and wait out the grace (an hour here, on a manual clock that moves 10 s): it
// sends at once, once. The sender is the edge of the world (Meta's Graph API): a fake that accepts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createLogger } from '../../src/logger.ts';
import type { NewEvent } from '../../src/services.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import type { WhatsAppSender } from '../../src/whatsapp/outbound.ts';
import { createOutboundWorker } from '../../src/whatsapp/outbound-worker.ts';
import { testConfig } from '../support/parley.ts';
import { startCutProxy } from '../support/pg-cut-proxy.ts';
import { createMigratedTestDatabase, sharedPostgresUrl } from '../support/shared-postgres.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const T0 = Date.UTC(2026, 4, 1, 12);
const GRACE_MS = 3600_000;
const WAIT = { timeout: 30_000, interval: 50 };

async function setup() {
  const server = new URL(sharedPostgresUrl());
  const proxy = await startCutProxy({ host: server.hostname, port: Number(server.port) });
  cleanups.push(() => proxy.close());
  const clock = createManualClock(T0);
  const logger = createLogger('silent');
  const store = await openPostgresStore({ url: proxy.via(await createMigratedTestDatabase()), clock, logger });
  cleanups.push(() => store.close());
  const config = ConfigSchema.parse(testConfig({ channels: { whatsapp: { enabled: true, uncertain_grace_ms: GRACE_MS } } }));
  const events: NewEvent[] = [];
  const services = { store, clock, config, logger, telemetry: { event: (e: NewEvent) => void events.push(e) } };
  const sent: { callbackData?: string; at: number }[] = [];
  const sender: WhatsAppSender = {
    name: 'fake-graph',
    async send(m) {
      sent.push({ callbackData: m.callbackData, at: clock.now() });
      return { ok: true, providerMessageId: `wamid.out.${sent.length}` };
    },
  };
  const outboundQueue = createOutboundWorker({ services, sender, log: logger });
  await outboundQueue.start();
  cleanups.push(() => outboundQueue.stop());
  return { store, clock, events, sent, outboundQueue, proxy };
}

describe('a send marker whose write failed but whose commit landed', () => {
  it('hides no send: the next run sends at once (not after the grace), and only once', async () => {
    const { store, clock, events, sent, outboundQueue, proxy } = await setup();
    const cut = proxy.cutAnswerTo(['wa_put_attempt', 'out:r1']);
    const message = { kind: 'text' as const, to: '+15550001111', text: 'Your order shipped.' };
    await outboundQueue.enqueue({ message, customerId: 'c1', conversationId: 'c1:whatsapp', sourceId: 'r1' }, { id: 'out:r1' });
    await cut;
    // The marker committed though its write was refused; nothing went out under it.
    await vi.waitFor(async () => expect(await store.whatsapp.sendAttempt('out:r1')).toEqual({ startedAt: T0 }), WAIT);
    expect(sent).toEqual([]);

    // The worker tries the job again: a store that could not write delays it on the clock, which moves a second at
    // a look (at most 10 minutes in all, well inside the grace) until the message went out.
    await vi.waitFor(() => {
      if (sent.length === 0) clock.advance(1_000);
      expect(sent).toHaveLength(1);
    }, WAIT);
    expect(sent[0]).toMatchObject({ callbackData: 'out:r1' });
    expect(sent[0].at).toBeLessThan(T0 + GRACE_MS);
    await vi.waitFor(async () => expect(await store.whatsapp.sent('out:r1')).toMatchObject({ providerMessageId: 'wamid.out.1' }), WAIT);
    expect(events.filter((e) => e.type === 'whatsapp.outbound').map((e) => e.data?.status)).toEqual(['accepted']);
  }, 120_000);
});
