// Issue 18: WhatsApp as Meta sends it today, end to end against a local fake Graph API. Every body in
// test/fixtures/whatsapp is posted signed, as Meta puts it on the wire, again as a duplicate, and
// re-serialised with other whitespace: always 200, one reply per customer message, none for the rest.
import { afterEach, describe, expect, it } from 'vitest';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { conversationIdFor, type MessageRecord } from '../../src/conversations/history.ts';
import { signPayload } from '../../src/whatsapp/signature.ts';
import { FIXTURES, loadFixture, metaWire, spacedWire } from '../fixtures/whatsapp/index.ts';
import { TEST_SECRET, type TestParley } from '../support/parley.ts';
import { allCustomers } from '../support/stored.ts';
import { telemetryEvents, whatsappParley } from '../support/whatsapp-parley.ts';
import { outboundSettled, sleep, until, WA } from '../support/whatsapp.ts';
import type { FakeGraph } from '../support/fake-graph.ts';

const PHONE_NUMBER_ID = '106540352242922';
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const setup = (o: Parameters<typeof whatsappParley>[1] = {}) =>
  whatsappParley(open, Object.assign({}, o, { whatsapp: Object.assign({ phone_id: PHONE_NUMBER_ID }, o.whatsapp) }));

async function postRaw(p: TestParley, raw: string) {
  return fetch(`${p.url()}/wa/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signPayload(raw, WA.app_secret) },
    body: raw,
  });
}
const post = (p: TestParley, body: unknown) => postRaw(p, metaWire(body));

/** Sets every message timestamp of a body to now (the 24-hour window counts from Meta's timestamp). */
function fresh<T>(body: T): T {
  const now = String(Math.floor(Date.now() / 1000));
  for (const e of (body as any).entry) for (const c of e.changes) for (const m of c.value?.messages ?? []) m.timestamp = now;
  return body;
}

async function settle(p: TestParley) {
  const wa = p.runtime.whatsapp;
  await until(
    async () => {
      await Promise.all([wa.inbound.idle(), wa.outboundQueue.idle()]);
      return wa.inbound.depth() + wa.outboundQueue.depth();
    },
    (n) => n === 0,
  );
}

const customers = (p: TestParley) => createCustomerRepo(p.services.store, p.services.clock);
/** Every stored customer (there is no repository listing: LMDB's table). */
const history = async (p: TestParley, customerId: string): Promise<MessageRecord[]> =>
  (await p.services.store.history.since(conversationIdFor(customerId, 'whatsapp'), 0)).map((r) => r.record);
const errorLogs = (p: TestParley) => p.logs.filter((l) => /"level":(50|60)/.test(l));
const deliveredTo = (graph: FakeGraph) => graph.delivered().map((d) => d.body as { to?: string; recipient?: string });

describe('real webhook bodies', () => {
  it('every fixture: 200 as sent, as a duplicate and re-serialised; exactly one reply per customer message; none for statuses, system events, removed reactions, edits', async () => {
    const { p, graph } = await setup({ gatherMs: 0 });
    const expected = FIXTURES.reduce((n, f) => n + f.replies, 0);
    // One fixture at a time, each answered before the next: several fixtures come from one sender, and messages of one
    // sender that arrive together are answered by one turn (a burst, issue 33), which is not what this test is about.
    let answered = 0;
    for (const f of FIXTURES) {
      const body = loadFixture(f.file);
      for (const raw of [metaWire(body), metaWire(body), spacedWire(body)]) {
        const res = await postRaw(p, raw);
        expect(res.status, f.file).toBe(200);
        expect((await res.json()).ignored, f.file).toBe(f.ignored);
      }
      answered += f.replies;
      await until(
        () => graph.delivered().length,
        (n) => n >= answered,
        20_000,
      );
    }
    await until(
      () => graph.delivered().length,
      (n) => n >= expected,
      20_000,
    );
    await settle(p);
    await sleep(300);
    expect(graph.delivered()).toHaveLength(expected);
    // Username users (BSUID only) are answered through `recipient`, as Meta's send API documents.
    const bsuidOnly = deliveredTo(graph).filter((b) => b.recipient);
    expect(bsuidOnly.map((b) => b.recipient).sort()).toEqual(['GB.90210044556677889900', 'US.55501234000000000042']);
    expect(bsuidOnly.every((b) => b.to === undefined)).toBe(true);
    expect(errorLogs(p)).toEqual([]);
  }, 120_000);

  it('a multi-entry body mixing a BSUID message, a number change, a status and an unknown field: one reply, the change applied, the status stored', async () => {
    const { p, graph } = await setup();
    // Tom is known by his old number before the change.
    await customers(p).resolveWhatsApp({ phone: '+447700900123' });
    const res = await post(p, loadFixture('multi-entry-mixed.json'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: 2, queued: 2, statuses: 1, ignored: 1 });
    const [reply] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(reply.body).toMatchObject({ recipient: 'GB.90210044556677889900', recipient_type: 'individual', type: 'text' });
    await settle(p);
    expect((await customers(p).findBy('phone', '+447700900456'))?.externalId).toBe('+447700900123');
    expect(await customers(p).findBy('phone', '+447700900123')).toBeUndefined();
    expect(graph.delivered()).toHaveLength(1);
    const statuses = await telemetryEvents(p, 'whatsapp.status');
    expect(statuses.map((s) => s.data.status)).toEqual(['delivered']);
    const unusable = await telemetryEvents(p, 'whatsapp.unusable');
    expect(unusable.map((u) => [u.data.part, u.data.partType])).toEqual([['change', 'phone_number_quality_update']]);
  });
});

describe('customers identified by a BSUID', () => {
  it('a username user with no phone is answered, gets proactive messages within 24 h, and only a template after', async () => {
    const { p, graph } = await setup({ proactive: true });
    const bsuid = 'US.55501234000000000042';
    expect((await post(p, fresh(loadFixture('text-bsuid-only.json')))).status).toBe(200);
    const [reply] = await until(
      () => graph.delivered(),
      (d) => d.length >= 1,
    );
    expect(reply.body).toMatchObject({ recipient: bsuid, type: 'text' });
    expect(reply.body.to).toBeUndefined();
    expect(reply.body.text.body).toContain('shipped');
    const c = (await customers(p).findBy('bsuid', bsuid))!;
    expect(c).toMatchObject({ externalId: bsuid, bsuid });
    expect(c.phone).toBeUndefined();

    const api = (path: string, body: unknown) =>
      fetch(`${p.url()}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    await api('/proactive/opt-in', { customerExternalId: bsuid, optIn: true });
    expect(await api('/proactive', { customerExternalId: bsuid, channel: 'whatsapp', content: 'Your refund was sent.' })).toMatchObject({ accepted: true });
    const sent = await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    expect(sent[1].body).toMatchObject({ recipient: bsuid, text: { body: 'Your refund was sent.' } });
    await outboundSettled(p.url());

    await api('/__test__/clock', { offsetMs: 25 * 3600_000 });
    expect(await api('/proactive', { customerExternalId: bsuid, channel: 'whatsapp', content: 'Still there?' })).toEqual({
      accepted: false,
      reason: 'Outside 24h window — a template message is required',
    });
    const templated = await api('/proactive', {
      customerExternalId: bsuid,
      channel: 'whatsapp',
      content: 'x',
      template: { name: 'refund_update', language: 'en' },
    });
    expect(templated).toMatchObject({ accepted: true });
    const all = await until(
      () => graph.delivered(),
      (d) => d.length >= 3,
    );
    expect(all).toHaveLength(3);
    expect(all[2].body).toMatchObject({ recipient: bsuid, type: 'template', template: { name: 'refund_update' } });
  });

  it('phone first, then phone + BSUID, then BSUID alone: one customer, one conversation; replies go to the phone', async () => {
    const { p, graph } = await setup();
    const phoneOnly = fresh(loadFixture('text-phone-only.json'));
    const both = structuredClone(phoneOnly);
    const m2 = both.entry[0].changes[0].value.messages[0];
    m2.id = 'wamid.both.1';
    m2.from_user_id = 'CA.31000000000000000007';
    m2.text.body = 'Also, is order 1004 shipped?';
    both.entry[0].changes[0].value.contacts[0].user_id = 'CA.31000000000000000007';
    const bsuidOnly = structuredClone(both);
    const m3 = bsuidOnly.entry[0].changes[0].value.messages[0];
    m3.id = 'wamid.bsuid.1';
    delete m3.from;
    delete bsuidOnly.entry[0].changes[0].value.contacts[0].wa_id;
    for (const [i, body] of [phoneOnly, both, bsuidOnly].entries()) {
      expect((await post(p, body)).status).toBe(200);
      await until(
        () => graph.delivered().length,
        (n) => n >= i + 1,
      );
    }
    expect(await allCustomers(p)).toEqual([expect.objectContaining({ externalId: '+16315551181', phone: '+16315551181', bsuid: 'CA.31000000000000000007' })]);
    const c = (await allCustomers(p))[0];
    expect((await history(p, c.customerId)).filter((r) => r.role === 'user')).toHaveLength(3);
    expect(deliveredTo(graph)).toEqual([
      { ...deliveredTo(graph)[0], to: '16315551181' },
      expect.objectContaining({ to: '16315551181' }),
      expect.objectContaining({ to: '16315551181' }),
    ]);
  });
});

describe('system events update identity and are never answered', () => {
  it('user_changed_number: the new number (and its new BSUID) reach the same customer and history; the old number no longer does', async () => {
    const { p, graph } = await setup();
    expect((await post(p, loadFixture('text-bsuid-and-phone.json'))).status).toBe(200);
    await until(
      () => graph.delivered().length,
      (n) => n >= 1,
    );
    const before = (await customers(p).findBy('phone', '+16505551234'))!;
    expect((await post(p, loadFixture('system-user-changed-number.json'))).status).toBe(200);
    await settle(p);
    expect(await customers(p).findBy('phone', '+16505551234')).toBeUndefined();
    expect(await customers(p).findBy('bsuid', 'US.13491208655302741918')).toBeUndefined();
    expect(await customers(p).get(before.customerId)).toMatchObject({ phone: '+12195555358', bsuid: 'US.22005551234000000001', externalId: '+16505551234' });
    // The new number writes: same customer, same conversation.
    const next = loadFixture('text-bsuid-and-phone.json');
    const m = next.entry[0].changes[0].value.messages[0];
    Object.assign(m, { id: 'wamid.after.change', from: '12195555358', from_user_id: 'US.22005551234000000001' });
    Object.assign(next.entry[0].changes[0].value.contacts[0], { wa_id: '12195555358', user_id: 'US.22005551234000000001' });
    await post(p, next);
    const sent = await until(
      () => graph.delivered(),
      (d) => d.length >= 2,
    );
    expect(sent[1].body.to).toBe('12195555358');
    expect((await history(p, before.customerId)).filter((r) => r.role === 'user')).toHaveLength(2);
    expect(await allCustomers(p)).toHaveLength(1);
    const changes = await telemetryEvents(p, 'whatsapp.identity');
    expect(changes).toEqual([
      expect.objectContaining({ customerId: before.customerId, data: expect.objectContaining({ systemType: 'user_changed_number', changed: true }) }),
    ]);
  });

  it('user_changed_user_id: the new BSUID joins the same customer; customer_identity_changed changes nothing; neither is answered', async () => {
    const { p, graph } = await setup();
    await post(p, loadFixture('text-bsuid-only.json'));
    await until(
      () => graph.delivered().length,
      (n) => n >= 1,
    );
    const ada = (await customers(p).findBy('bsuid', 'US.55501234000000000042'))!;
    expect((await post(p, loadFixture('system-user-changed-user-id.json'))).status).toBe(200);
    expect((await post(p, loadFixture('system-customer-identity-changed.json'))).status).toBe(200);
    await settle(p);
    expect((await customers(p).findBy('bsuid', 'US.77120033004455667788'))?.customerId).toBe(ada.customerId);
    expect(await customers(p).findBy('bsuid', 'US.55501234000000000042')).toBeUndefined();
    await sleep(200);
    expect(graph.delivered()).toHaveLength(1);
    expect((await history(p, ada.customerId)).map((r) => r.role).filter((r) => r !== 'tool')).toEqual(['user', 'assistant']);
    const notices = await telemetryEvents(p, 'whatsapp.event');
    expect(notices.map((n) => n.data.systemType)).toEqual(['customer_identity_changed']);
  });
});

describe('no turn for a removed reaction, an edit or a deletion', () => {
  it('after an answered message: the reaction removal, the edit and the deletion add nothing to history and send nothing', async () => {
    const { p, graph } = await setup();
    await post(p, loadFixture('image-caption.json'));
    await until(
      () => graph.delivered().length,
      (n) => n >= 1,
    );
    await settle(p);
    const c = (await customers(p).findBy('phone', '+16505551234'))!;
    const records = await history(p, c.customerId);
    expect(records[0]).toMatchObject({ role: 'user', data: { content: { type: 'media', mediaId: '1003383421387256', caption: 'This is the damaged box' } } });
    for (const f of ['reaction-removed-empty.json', 'reaction-removed-absent.json', 'edit.json', 'edit-as-unsupported.json', 'revoke.json']) {
      const res = await post(p, loadFixture(f));
      expect(await res.json(), f).toMatchObject({ received: 1, queued: 0 });
    }
    await settle(p);
    await sleep(300);
    expect(graph.delivered()).toHaveLength(1);
    expect(await history(p, c.customerId)).toEqual(records);
    const events = await telemetryEvents(p, 'whatsapp.event');
    expect(events.map((e) => e.data.event).sort()).toEqual(['edit', 'edit', 'reaction_removed', 'reaction_removed', 'revoke']);
  });
});

describe('what Parley cannot use', () => {
  it('is acknowledged with the rest of the body (which is answered), logged once with its type, and counted in /metrics', async () => {
    const { p, graph } = await setup();
    const body = fresh(loadFixture('text.json'));
    body.entry[0].changes[0].value.messages.push({ from: '16505551234', type: 'text', text: { body: 'I have no id' } });
    body.entry[0].changes[0].value.messages.push({ from: '16505551234', type: 'text', text: { body: 'me neither' } });
    const res = await post(p, body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: 3, queued: 1, statuses: 0, ignored: 2 });
    await until(
      () => graph.delivered().length,
      (n) => n >= 1,
    );
    const lines = p.logs.filter((l) => l.includes('cannot use'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('2 message text (no message id or type)');
    await p.services.telemetry.flush();
    const metrics = await (await fetch(`${p.url()}/metrics`, { headers: { authorization: `Bearer ${TEST_SECRET}` } })).text();
    expect(metrics).toMatch(/parley_whatsapp_unusable_total\{part="message",type="text"\} 2/);
  });
});
