// The WhatsApp conversation sink (issue 31 part 3 split it out of the channel), on a real LMDB store with a manual
// clock and the real outbound worker; the sender is the edge of the world (Meta's Graph API), a fake that accepts.
// A reply goes out in WhatsApp's formatting once its transaction committed; a confirmation marks the WhatsApp message
// that answered it handled in that same transaction; a handoff notice outside the 24 h window is skipped and reported.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConversationOutput } from '../../machines/conversation.ts';
import { createManualClock } from '../../src/clock.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { createLogger } from '../../src/logger.ts';
import type { NewEvent } from '../../src/services.ts';
import type { ConversationMeta } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import { numberRouting } from '../../src/whatsapp/numbers.ts';
import type { OutboundWhatsApp, WhatsAppSender } from '../../src/whatsapp/outbound.ts';
import { createOutboundWorker } from '../../src/whatsapp/outbound-worker.ts';
import { createWhatsAppSink } from '../../src/whatsapp/sink.ts';
import { testConfig } from '../support/parley.ts';
import { openTestStore } from '../support/store.ts';

const open: Store[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const T0 = Date.UTC(2026, 4, 1, 12);
const HOUR = 3600_000;

async function setup() {
  const store = await openTestStore();
  open.push(store);
  const clock = createManualClock(T0);
  const config = ConfigSchema.parse(testConfig({ channels: { whatsapp: { enabled: true } } }));
  const events: NewEvent[] = [];
  const services = { store, clock, config, logger: createLogger('silent'), telemetry: { event: (e: NewEvent) => void events.push(e) } };
  const sent: OutboundWhatsApp[] = [];
  const sender: WhatsAppSender = {
    name: 'fake-graph',
    async send(m) {
      sent.push(m);
      return { ok: true, providerMessageId: `wamid.out.${sent.length}` };
    },
  };
  const outboundQueue = createOutboundWorker({ services, sender, log: services.logger });
  await outboundQueue.start();
  stops.push(() => outboundQueue.stop());
  const confirming = new Map<string, string>();
  const sink = createWhatsAppSink({ services, outboundQueue, routing: numberRouting(config.channels.whatsapp), confirming, log: services.logger });
  const customer = await createCustomerRepo(store, clock).resolveWhatsApp({ phone: '+15550001111' });
  await createCustomerRepo(store, clock).touchInbound(customer.customerId, 'whatsapp', T0);
  const meta: ConversationMeta = { conversationId: `${customer.customerId}:whatsapp`, customerId: customer.customerId, channel: 'whatsapp' };
  /** What the conversation host does with an output: written in its transaction, delivered after the commit. */
  const emit = async (o: ConversationOutput) => {
    await store.transaction((tx) => sink.write!(tx, meta, o));
    sink.deliver!(meta, o);
  };
  return { store, clock, events, sent, outboundQueue, confirming, meta, emit };
}

describe('the WhatsApp sink', () => {
  it('a reply goes out once its write committed, in WhatsApp formatting, as the job of its reply id', async () => {
    const { sent, outboundQueue, emit } = await setup();
    await emit({ type: 'reply', id: 'reply-1', turnId: 't1', text: 'Your order is **on its way**.', replyTo: 'm1' });
    await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 20_000, interval: 50 });
    expect(sent[0]).toMatchObject({ kind: 'text', to: '+15550001111', text: 'Your order is *on its way*.', callbackData: 'out:reply-1' });
    expect(await outboundQueue.knows('out:reply-1')).toBe(true);
  }, 60_000);

  it("a confirmation marks the WhatsApp message that answered it handled, in the confirmation's own transaction", async () => {
    const { store, confirming, meta, emit } = await setup();
    const confirmation: ConversationOutput = { type: 'confirmation', id: 'c1', turnId: 't1', name: 'cancel_order', outcome: 'approved' };
    await emit(confirmation);
    expect(await store.whatsapp.handled('wamid.in.unrelated')).toBeFalsy();
    confirming.set(meta.conversationId, 'wamid.in.yes');
    await emit(confirmation);
    expect(await store.whatsapp.handled('wamid.in.yes')).toBeTruthy();
  }, 60_000);

  it("a handoff notice outside the customer's 24 h window is not queued, and is reported once its write committed", async () => {
    const { clock, events, outboundQueue, meta, emit } = await setup();
    clock.advance(25 * HOUR);
    await emit({ type: 'handoff', id: 'h:1', phase: 'requested', source: 'model' });
    expect(await outboundQueue.knows(`out:${meta.conversationId}:h:1`)).toBe(false);
    expect(events.filter((e) => e.type === 'whatsapp.notice_skipped')).toEqual([
      expect.objectContaining({ conversationId: meta.conversationId, data: { notice: 'requested', reason: 'outside_window' } }),
    ]);
  }, 60_000);
});
