// Issue 33, part 5: confirmations in the customer's language, with the outcome. Real Parley (LMDB or PostgreSQL, per
// the project), the real SDK over a real socket, the widget protocol over a real socket, a fake OpenAI server.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, withReceipt, type ExposeOptions } from '../../sdk/src/index.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const CANCEL_SUMMARY = { en: 'Cancel order {orderId}', es: 'Cancelar el pedido {orderId}', de: 'Bestellung {orderId} stornieren' };
const orderId = z.object({ orderId: z.string() });

/** The integrator's backend: cancels 1001 (with its own receipt), refuses 1002 as shipped (with or without one). */
async function backend(p: TestParley, o: { summary?: ExposeOptions<typeof orderId>['summary']; failureReceipt?: boolean } = {}) {
  const calls: { orderId: string; locale?: string }[] = [];
  const sdk = createClient();
  sdk.expose(
    'cancelOrder',
    { description: 'Cancel an order', parameters: orderId, mode: 'write', summary: o.summary ?? CANCEL_SUMMARY },
    async (args: { orderId: string }, ctx: { locale?: string }) => {
      calls.push({ orderId: args.orderId, locale: ctx.locale });
      if (args.orderId === '1002') {
        const err = Object.assign(new Error('it has already shipped'), { code: 'not_cancellable' });
        throw o.failureReceipt ? Object.assign(err, { receipt: { en: 'Order 1002 has shipped', es: 'El pedido 1002 ya salió' } }) : err;
      }
      return withReceipt({ orderId: args.orderId, status: 'cancelled' }, { en: `Order ${args.orderId} cancelled`, es: `Pedido ${args.orderId} cancelado` });
    },
  );
  await sdk.listen({ url: p.url(), secret: TEST_SECRET });
  open.push(sdk);
  return calls;
}

async function setup(config: { sdk?: { summary_timeout_ms: number } } = {}): Promise<{ p: TestParley; llm: FakeOpenAi }> {
  const llm = await startFakeOpenAi();
  open.push(llm);
  const p = await startParley({ config: Object.assign({ llm: { provider: 'openai' as const, base_url: llm.url, model: 'fake-1', api_key: 'k' } }, config) });
  open.push(p);
  return { p, llm };
}

async function widget(p: TestParley, customerId: string, locale?: string): Promise<WidgetClient> {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send(Object.assign({ type: 'init', customerId, email: `${customerId}@example.com` }, locale ? { locale } : {}));
  await w.next((f) => f.type === 'ready');
  return w;
}

/** The model: cancels the order number in the customer's last message, then answers `text` once the result is in. */
const cancelThenAnswer = (text: string) => (body: { messages: { role: string; content: string }[] }) => {
  if (body.messages.some((m) => m.role === 'tool')) return { text };
  const last = body.messages.filter((m) => m.role === 'user').pop()?.content ?? '';
  return { toolCalls: [{ name: 'cancelOrder', args: { orderId: /\d{4}/.exec(last)?.[0] ?? '0000' } }] };
};

const systemTexts = (request: { messages: { role: string; content: string }[] }) => request.messages.filter((m) => m.role === 'system').map((m) => m.content);

describe("confirmations in the customer's language", () => {
  it('a Spanish widget: the model is told the language, the card reads "Cancelar el pedido 1001", the receipt the backend\'s words', async () => {
    const { p, llm } = await setup();
    llm.fallback(cancelThenAnswer('Listo, pedido cancelado.'));
    const calls = await backend(p);
    const w = await widget(p, 'cust-es', 'es-MX');
    expect((await p.services.store.customers.get('cust-es'))?.locale).toBe('es-MX');
    w.send({ type: 'message', id: 'm1', text: 'cancela el pedido 1001' });
    const confirm = await w.next((f) => f.type === 'confirm');
    expect(confirm.summary).toBe('Cancelar el pedido 1001');
    expect(systemTexts(llm.requests[0])).toContain("Answer in the customer's language: es-MX (their locale), unless they write to you in another language.");
    w.send({ type: 'confirm', id: confirm.id, approve: true });
    const receipt = await w.next((f) => f.type === 'receipt');
    expect(receipt).toMatchObject({ id: confirm.id, ok: true, text: 'Pedido 1001 cancelado' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant');
    expect(calls).toEqual([{ orderId: '1001', locale: 'es-MX' }]);
  });

  it('an approved action the backend refuses: the receipt says it failed, live and after a reconnect (derived when the backend gave none)', async () => {
    const { p, llm } = await setup();
    llm.fallback(cancelThenAnswer('Lo siento, ya se envió.'));
    await backend(p);
    const w = await widget(p, 'cust-fail', 'es');
    w.send({ type: 'message', id: 'm1', text: 'cancela el pedido 1002' });
    const confirm = await w.next((f) => f.type === 'confirm');
    expect(confirm.summary).toBe('Cancelar el pedido 1002');
    w.send({ type: 'confirm', id: confirm.id, approve: true });
    const approved = await w.next((f) => f.type === 'confirmation');
    expect(approved.outcome).toBe('approved');
    const receipt = await w.next((f) => f.type === 'receipt');
    expect(receipt).toMatchObject({ id: confirm.id, ok: false, text: 'No se pudo cancelar el pedido 1002: it has already shipped' });
    await w.next((f) => f.type === 'message' && f.role === 'assistant');
    w.close();
    // After a reload: the history keeps the receipt where the customer approved, as a failure.
    const again = await connectWidget(p.url());
    open.push(again);
    again.send({ type: 'init', customerId: 'cust-fail', email: 'cust-fail@example.com', locale: 'es' });
    const ready = await again.next((f) => f.type === 'ready');
    const entry = ready.history.find((h: { id: string }) => h.id === confirm.id);
    expect(entry).toMatchObject({ role: 'confirmation', text: 'Cancelar el pedido 1002', outcome: 'approved', receipt: { ok: false, text: receipt.text } });
    expect(ready.history.map((h: { role: string }) => h.role)).toEqual(['user', 'confirmation', 'assistant']);
  });

  it("the backend's own failure receipt wins over the derived one", async () => {
    const { p, llm } = await setup();
    llm.fallback(cancelThenAnswer('Sorry.'));
    await backend(p, { failureReceipt: true });
    const w = await widget(p, 'cust-own', 'es');
    w.send({ type: 'message', id: 'm1', text: 'cancela 1002' });
    const confirm = await w.next((f) => f.type === 'confirm');
    w.send({ type: 'confirm', id: confirm.id, approve: true });
    expect(await w.next((f) => f.type === 'receipt')).toMatchObject({ ok: false, text: 'El pedido 1002 ya salió' });
  });

  it('a locale change between sessions: the next session is worded in the new locale, and so is the model told', async () => {
    const { p, llm } = await setup();
    llm.fallback(cancelThenAnswer('Hecho.'));
    await backend(p);
    const first = await widget(p, 'cust-move', 'es');
    first.send({ type: 'message', id: 'm1', text: 'cancela 1001' });
    const c1 = await first.next((f) => f.type === 'confirm');
    expect(c1.summary).toBe('Cancelar el pedido 1001');
    first.send({ type: 'confirm', id: c1.id, approve: true });
    await first.next((f) => f.type === 'message' && f.role === 'assistant');
    first.close();
    const second = await widget(p, 'cust-move', 'de-AT');
    expect((await p.services.store.customers.get('cust-move'))?.locale).toBe('de-AT');
    second.send({ type: 'message', id: 'm2', text: 'storniere 1003' });
    const c2 = await second.next((f) => f.type === 'confirm');
    expect(c2.summary).toBe('Bestellung 1003 stornieren');
    const last = llm.requests[llm.requests.length - 1];
    expect(systemTexts(last).some((t) => t.includes("customer's language: de-AT"))).toBe(true);
    expect(systemTexts(last).some((t) => t.includes('language: es'))).toBe(false);
  });

  it('a summary function runs on the backend with the locale; one that does not answer in time falls back to the templates', async () => {
    const { p, llm } = await setup({ sdk: { summary_timeout_ms: 400 } });
    llm.fallback(cancelThenAnswer('Hecho.'));
    const asked: string[] = [];
    await backend(p, {
      summary: (args: { orderId: string }, locale: string) => {
        asked.push(locale);
        return locale.startsWith('es') ? `¿Anular el pedido n.º ${args.orderId}` : undefined;
      },
    });
    const w = await widget(p, 'cust-fn', 'es');
    w.send({ type: 'message', id: 'm1', text: 'cancela 1001' });
    expect((await w.next((f) => f.type === 'confirm')).summary).toBe('¿Anular el pedido n.º 1001');
    expect(asked).toEqual(['es']);

    // A backend whose summary never comes: the card is still asked, in the built-in words (no templates given).
    const { p: p2, llm: llm2 } = await setup({ sdk: { summary_timeout_ms: 400 } });
    llm2.fallback(cancelThenAnswer('Hecho.'));
    await backend(p2, { summary: () => new Promise<string>(() => undefined) });
    const w2 = await widget(p2, 'cust-slow', 'es');
    w2.send({ type: 'message', id: 'm1', text: 'cancela 1001' });
    expect((await w2.next((f) => f.type === 'confirm', 15_000)).summary).toBe('Cancel order 1001');
  });

  it('a customer whose widget sent no locale gets the built-in English summary for a function without templates, and no language line', async () => {
    const { p, llm } = await setup();
    llm.fallback(cancelThenAnswer('Done.'));
    const sdk = createClient();
    sdk.expose('cancelOrder', { description: 'Cancel an order', parameters: orderId, mode: 'write' }, async () => ({ ok: true }));
    await sdk.listen({ url: p.url(), secret: TEST_SECRET });
    open.push(sdk);
    const w = await widget(p, 'cust-plain');
    w.send({ type: 'message', id: 'm1', text: 'cancel 1001' });
    const confirm = await w.next((f) => f.type === 'confirm');
    expect(confirm.summary).toBe('Cancel order 1001');
    expect(systemTexts(llm.requests[0]).some((t) => t.includes("customer's language"))).toBe(false);
    w.send({ type: 'confirm', id: confirm.id, approve: true });
    expect(await w.next((f) => f.type === 'receipt')).toMatchObject({ ok: true, text: 'Done: Cancel order 1001' });
  });

  it('an init with a malformed locale is refused as a bad frame, not stored', async () => {
    const { p } = await setup();
    const w = await connectWidget(p.url());
    open.push(w);
    w.send({ type: 'init', customerId: 'cust-bad', email: 'cust-bad@example.com', locale: 'español; DROP' });
    const error = await w.next((f) => f.type === 'error');
    expect(error.code).toBe('bad_frame');
    expect(error.message).toMatch(/locale/);
  });
});
