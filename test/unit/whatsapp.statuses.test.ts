// The WhatsApp channel's delivery statuses and outbound worker, on a real LMDB store with a manual clock (issue 31
// part 3 split them out of the channel): a status that echoes the job id of a send whose answer never came marks it
// accepted, and the worker, woken at once, records its delivery without waiting out the grace and never resends it.
// The sender is the edge of the world (Meta's Graph API): a fake that never answers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createLogger } from '../../src/logger.ts';
import type { NewEvent } from '../../src/services.ts';
import type { Store } from '../../src/store/repos.ts';
import type { WhatsAppSender } from '../../src/whatsapp/outbound.ts';
import { createOutboundWorker } from '../../src/whatsapp/outbound-worker.ts';
import { createStatusRecorder } from '../../src/whatsapp/statuses.ts';
import { parseWebhook } from '../../src/whatsapp/webhook-payload.ts';
import { testConfig } from '../support/parley.ts';
import { openTestStore } from '../support/store.ts';
import { webhookBody } from '../support/whatsapp.ts';

const open: Store[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const T0 = Date.UTC(2026, 4, 1, 12);
const GRACE_MS = 10 * 60_000;

async function setup() {
  const store = await openTestStore();
  open.push(store);
  const clock = createManualClock(T0);
  const config = ConfigSchema.parse(testConfig({ channels: { whatsapp: { enabled: true, uncertain_grace_ms: GRACE_MS } } }));
  const events: NewEvent[] = [];
  const services = { store, clock, config, logger: createLogger('silent'), telemetry: { event: (e: NewEvent) => void events.push(e) } };
  const sent: string[] = [];
  // Graph took the message but its answer never came: the request is uncertain.
  const sender: WhatsAppSender = {
    name: 'fake-graph',
    async send(m) {
      sent.push(m.callbackData ?? '');
      return { ok: false, retryable: true, uncertain: true, message: 'no answer within send_timeout_ms' };
    },
  };
  const outboundQueue = createOutboundWorker({ services, sender, log: services.logger });
  await outboundQueue.start();
  stops.push(() => outboundQueue.stop());
  const recordStatuses = createStatusRecorder({ services, outboundQueue });
  return { store, clock, events, sent, outboundQueue, recordStatuses };
}

const outbound = (events: NewEvent[], status: string) => events.filter((e) => e.type === 'whatsapp.outbound' && e.data?.status === status);

describe('a status for a send whose answer never came', () => {
  it('marks it accepted: the worker records the delivery at once (before the grace ends), never sending again', async () => {
    const { store, clock, events, sent, outboundQueue, recordStatuses } = await setup();
    const message = { kind: 'text' as const, to: '+15550001111', text: 'Your order shipped.' };
    await outboundQueue.enqueue({ message, customerId: 'c1', conversationId: 'c1:whatsapp', sourceId: 'r1' }, { id: 'out:r1' });
    await vi.waitFor(() => expect(outbound(events, 'uncertain')).toHaveLength(1), { timeout: 20_000, interval: 50 });
    expect(sent).toEqual(['out:r1']);

    // Meta's status webhook echoes the job id (biz_opaque_callback_data); the clock stays well inside the grace.
    const body = webhookBody(
      [],
      [{ id: 'wamid.out.1', status: 'delivered', timestamp: String(T0 / 1000 + 5), recipient_id: '15550001111', biz_opaque_callback_data: 'out:r1' }],
    );
    await recordStatuses(parseWebhook(body).statuses);

    await vi.waitFor(
      () =>
        expect(outbound(events, 'accepted')).toEqual([
          expect.objectContaining({ data: expect.objectContaining({ resolvedBy: 'status', providerMessageId: 'wamid.out.1' }) }),
        ]),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    expect(clock.now()).toBeLessThan(T0 + GRACE_MS);
    expect(await store.whatsapp.delivery('wamid.out.1')).toMatchObject({ jobId: 'out:r1', sourceId: 'r1', status: 'delivered' });
    expect(await store.whatsapp.sent('out:r1')).toMatchObject({ providerMessageId: 'wamid.out.1' });
    expect(sent).toEqual(['out:r1']);
    expect(events.filter((e) => e.type === 'whatsapp.status')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ status: 'delivered', jobId: 'out:r1', known: false, applied: true }) }),
    ]);
  }, 60_000);
});
