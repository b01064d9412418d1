// Issue 15 part 8: `GET /api/v1/telemetry/events?conversationId=…` (and turn-calls, which the dashboard's timeline
// reads) found nothing for a real conversation once the index compaction (every 5 s) had run: real conversation ids
// are 49 characters, and the index range missed every id of 40 or more. A real customer signed in by magic link, a
// real widget conversation, the real compaction timer.
import { afterEach, describe, expect, it } from 'vitest';
import { PENDING_END, PENDING_START } from '../../src/store/lmdb/telemetry/keys.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { lmdbKv } from '../support/store.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const auth = { authorization: `Bearer ${TEST_SECRET}` };
const get = async (p: TestParley, path: string) => (await fetch(`${p.url()}${path}`, { headers: auth })).json();

async function signedInConversation(p: TestParley, externalId: string) {
  const { url } = await (
    await fetch(`${p.url()}/auth/magic-link`, {
      method: 'POST',
      headers: Object.assign({ 'content-type': 'application/json' }, auth),
      body: JSON.stringify({ email: `${externalId}@example.com`, externalId }),
    })
  ).json();
  const { customerId, sessionToken } = await (await fetch(url)).json();
  const w = await connectWidget(p.url());
  open.push(w);
  w.send({ type: 'init', customerId, authToken: sessionToken });
  const ready = await w.next((f) => f.type === 'ready');
  w.send({ type: 'message', id: 'm1', text: 'hello' });
  await w.next((f) => f.type === 'message');
  return ready.conversationId as string;
}

describe('telemetry conversation filter with real ids', () => {
  it('returns the events and LLM calls of a 49-character conversation id after the index compaction ran', async () => {
    const p = await startParley({ config: { identity: { allow_anonymous: false } } });
    open.push(p);
    const conversationId = await signedInConversation(p, 'real-length-1');
    const other = await signedInConversation(p, 'real-length-2');
    expect(conversationId).toHaveLength(49);
    const wanted = ['message.in', 'message.out', 'turn.ended'];
    const types = async (id: string) =>
      ((await get(p, `/api/v1/telemetry/events?conversationId=${encodeURIComponent(id)}`)).items as { type: string }[]).map((e) => e.type);
    await expect.poll(() => types(conversationId), { timeout: 15_000 }).toEqual(expect.arrayContaining(wanted));

    // LMDB: the recorder's own compaction timer (5 s) folds the flushes' references into the index (PostgreSQL
    // indexes the rows as they are written).
    if (p.services.store.engine === 'lmdb') {
      const pending = () => [...lmdbKv(p.services.store).range('telemetry', { start: PENDING_START, end: PENDING_END })].length;
      await expect.poll(pending, { timeout: 10_000, interval: 250 }).toBe(0);
    }

    for (const id of [conversationId, other]) {
      const events = (await get(p, `/api/v1/telemetry/events?conversationId=${encodeURIComponent(id)}`)).items as { type: string; conversationId: string }[];
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(wanted));
      expect(events.every((e) => e.conversationId === id)).toBe(true);
      const calls = (await get(p, `/api/v1/telemetry/turn-calls?conversationId=${encodeURIComponent(id)}`)).items as { conversationId: string; ok: boolean }[];
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ conversationId: id, ok: true });
    }
    const desc = (await get(p, `/api/v1/telemetry/events?conversationId=${encodeURIComponent(conversationId)}&order=desc&limit=1`)).items;
    expect(desc).toHaveLength(1);
  });
});
