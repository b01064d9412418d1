// The inbound worker's guard against a rerun of a confirmation's answer: a typed "Yes" that answered a pending
// confirmation is marked handled in the transaction that stores the confirmation (the `confirming` mark the sink
// reads). A second run of the same inbound message (a crash after the confirmation's commit, before the job's
// completion was recorded) sees it handled: the function is not called again, and "Yes" is no new customer message
// and starts no turn. Real Parley, real SDK backend, fake Graph API (the edge of the world).
import { afterEach, describe, expect, it } from 'vitest';
import { conversationIdFor } from '../../src/conversations/history.ts';
import { parseWebhook } from '../../src/whatsapp/webhook-payload.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';
import { postWebhook, textMessage, until, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const WAIT_MS = 30_000;
const PHONE = '+15550108181';

describe('a typed answer to a confirmation, run again after a crash', () => {
  it('is applied once: the rerun calls no function, stores no customer message and starts no turn', async () => {
    const { p, graph, invoked } = await whatsappParley(open);
    await postWebhook(p.url(), webhookBody([textMessage(PHONE, 'cancel order 1001')]));
    const [prompt] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
      WAIT_MS,
    );
    expect(prompt.body.interactive.action.buttons).toHaveLength(2);
    const customer = await p.services.store.customers.findBy('phone', PHONE);
    const conversationId = conversationIdFor(customer!.customerId, 'whatsapp');
    const customerMessages = async () => (await p.services.store.history.recent(conversationId, 100, ['user'])).length;
    const before = await customerMessages();

    const yes = textMessage(PHONE, 'Yes');
    await postWebhook(p.url(), webhookBody([yes]));
    await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
      WAIT_MS,
    );
    await p.runtime.whatsapp.inbound.idle();
    expect(invoked).toEqual([{ name: 'cancelOrder', args: { orderId: '1001' } }]);
    expect(await p.services.store.whatsapp.handled(yes.id)).toBeTruthy();
    expect(await customerMessages()).toBe(before);

    // The same inbound message handled again, as the queue does after a crash between the confirmation's commit and
    // the job's completion (the finished job's id is kept, so the rerun comes under another id: same payload).
    const [again] = parseWebhook(webhookBody([yes])).messages;
    expect(await p.runtime.whatsapp.inbound.enqueue(again, { id: 'replayed-after-crash' })).toBe(true);
    await p.runtime.whatsapp.inbound.idle();
    // A rerun that took "Yes" for a message would have stored it before its job finished (receive awaits the write).
    expect(await customerMessages()).toBe(before);
    expect(invoked).toEqual([{ name: 'cancelOrder', args: { orderId: '1001' } }]);
    expect(await p.runtime.whatsapp.inbound.knows('replayed-after-crash')).toBe(true);
    expect(graph.delivered()).toHaveLength(2);
  }, 120_000);
});
