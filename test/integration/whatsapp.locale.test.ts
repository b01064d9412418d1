// Issue 33, part 5: WhatsApp confirmations in the customer's language. WhatsApp does not say the user's language: the
// customer's stored locale, else `channels.whatsapp.locale`, words the question and the buttons. Fake Graph API, the
// real SDK over a real socket, the offline model.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../sdk/src/index.ts';
import { TEST_SECRET } from '../support/parley.ts';
import { whatsappParley } from '../support/whatsapp-parley.ts';
import { buttonReply, postWebhook, textMessage, until, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function spanishBackend(url: string, invoked: { orderId: string; locale?: string }[]) {
  const sdk = createClient();
  sdk.expose(
    'cancelOrder',
    {
      description: 'Cancel an order',
      parameters: z.object({ orderId: z.string() }),
      mode: 'write',
      summary: { en: 'Cancel order {orderId}', es: 'Cancelar el pedido {orderId}' },
    },
    async (args: { orderId: string }, ctx: { locale?: string }) => {
      invoked.push({ orderId: args.orderId, locale: ctx.locale });
      return { orderId: args.orderId, status: 'cancelled' };
    },
  );
  await sdk.listen({ url, secret: TEST_SECRET });
  open.push(sdk);
}

describe('WhatsApp confirmations in the locale', () => {
  it('channels.whatsapp.locale es: "¿Cancelar el pedido 1001?" with Sí / No, and the function gets the locale', async () => {
    const { p, graph } = await whatsappParley(open, { backend: false, whatsapp: { locale: 'es' } });
    const invoked: { orderId: string; locale?: string }[] = [];
    await spanishBackend(p.url(), invoked);
    await postWebhook(p.url(), webhookBody([textMessage('+15550004444', 'cancel order 1001')]));
    const [prompt] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
      15_000,
    );
    expect(prompt.body.type).toBe('interactive');
    expect(prompt.body.interactive.body.text).toBe('¿Cancelar el pedido 1001?');
    const buttons = prompt.body.interactive.action.buttons as { reply: { id: string; title: string } }[];
    expect(buttons.map((b) => b.reply.title)).toEqual(['Sí', 'No']);
    await postWebhook(p.url(), webhookBody([buttonReply('+15550004444', buttons[0].reply.id, 'Sí')]));
    await until(
      () => invoked,
      (i) => i.length === 1,
      15_000,
    );
    expect(invoked).toEqual([{ orderId: '1001', locale: 'es' }]);
  });

  it('the default (en) keeps Yes / No; a customer whose stored locale is de gets Ja / Nein', async () => {
    const { p, graph } = await whatsappParley(open, { backend: false });
    await spanishBackend(p.url(), []);
    await postWebhook(p.url(), webhookBody([textMessage('+15550005555', 'cancel order 1001')]));
    const [prompt] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
      15_000,
    );
    expect(prompt.body.interactive.body.text).toBe('Cancel order 1001?');
    expect(prompt.body.interactive.action.buttons.map((b: { reply: { title: string } }) => b.reply.title)).toEqual(['Yes', 'No']);

    const customer = await p.services.store.customers.findBy('phone', '+15550006666');
    expect(customer).toBeUndefined();
    await postWebhook(p.url(), webhookBody([textMessage('+15550006666', 'hello')]));
    const known = await until(
      () => p.services.store.customers.findBy('phone', '+15550006666'),
      (c) => c !== undefined,
      15_000,
    );
    await p.services.store.customers.save(Object.assign({}, known!, { locale: 'de' }), known);
    const before = graph.delivered().length;
    await postWebhook(p.url(), webhookBody([textMessage('+15550006666', 'cancel order 1001')]));
    const sent = await until(
      () => graph.delivered(),
      (d) => d.some((m, i) => i >= before && m.body.type === 'interactive'),
      15_000,
    );
    const german = sent.find((m, i) => i >= before && m.body.type === 'interactive')!;
    // No German template: the English one (the integrator's words beat the built-in), with German buttons.
    expect(german.body.interactive.body.text).toBe('Cancel order 1001?');
    expect(german.body.interactive.action.buttons.map((b: { reply: { title: string } }) => b.reply.title)).toEqual(['Ja', 'Nein']);
  });
});
