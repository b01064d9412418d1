// The widget's "Talk to a person" (`handoff` frame) over real sockets, on LMDB and PostgreSQL (the vitest project's
// engine): offered in `ready.feedback.handoff` where handoff is on; it hands the conversation to a person with the
// customer's reason (the agent API's inbox reads it); refused with an error frame before anything was written, when a
// person has it already (a second click: nothing changes) and where handoff is off.
import { afterEach, describe, expect, it } from 'vitest';
import { CUSTOMER_ASKED_REASON } from '../../src/web/person.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { connectWidget, startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function api(p: TestParley, path: string) {
  const res = await fetch(`${p.url()}${path}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  return (await res.json()) as any;
}

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

async function answered(w: WidgetClient) {
  w.send({ type: 'message', id: 'm1', text: 'hello' });
  await w.next((f) => f.type === 'message' && f.role === 'assistant');
  w.send({ type: 'resolution', answer: 'no' });
  await w.next((f) => f.type === 'noted');
}

describe('Talk to a person from the widget', () => {
  it('hands over with the customer’s reason; a second click is refused and changes nothing; refused before any message', async () => {
    const p = await startParley();
    open.push(p);
    const early = await connectWidget(p.url());
    open.push(early);
    early.send({ type: 'handoff' });
    expect(await early.next((f) => f.type === 'error')).toMatchObject({ code: 'not_initialized' });

    const w = await widget(p, 'cust-p1');
    expect(w.frames.find((f) => f.type === 'ready')!.feedback).toEqual({ resolution: true, rating: false, handoff: true });
    w.send({ type: 'handoff' });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'no_conversation' });

    await answered(w);
    w.send({ type: 'handoff' });
    expect(await w.next((f) => f.type === 'status')).toMatchObject({ mode: 'human' });
    const inbox = await api(p, '/conversations?state=withHuman');
    expect(inbox.items).toEqual([
      expect.objectContaining({ conversationId: 'conv_web_cust-p1', handoff: expect.objectContaining({ source: 'api', reason: CUSTOMER_ASKED_REASON }) }),
    ]);

    w.send({ type: 'handoff' });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'already_with_person' });
    const read = await api(p, '/conversations/conv_web_cust-p1');
    expect(read.messages.filter((m: any) => m.role === 'handoff').map((m: any) => m.text)).toEqual(['requested']);
    expect(w.frames.filter((f) => f.type === 'status')).toHaveLength(1);
  });

  it('handoff.enabled false: not offered, and the frame is refused with not_enabled', async () => {
    const p = await startParley({ config: { handoff: { enabled: false } } });
    open.push(p);
    const w = await widget(p, 'cust-p2');
    expect(w.frames.find((f) => f.type === 'ready')!.feedback).toMatchObject({ handoff: false });
    await answered(w);
    w.send({ type: 'handoff' });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'not_enabled' });
    expect((await api(p, '/conversations?state=withHuman')).items).toEqual([]);
    expect(w.frames.filter((f) => f.type === 'status')).toEqual([]);
  });
});
