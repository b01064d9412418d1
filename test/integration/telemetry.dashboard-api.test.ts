// Issue 39 part 4, the API under the dashboard's fixes: a summary fitted to a short history (`fit=1`), narrowed to a
// channel; conversations listed with their customer's email and, only with `telemetry.store_text`, the last message's
// text; bad parameters answered 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const parleys: TestParley[] = [];
let withText: TestParley;
let withoutText: TestParley;

const get = async (p: TestParley, path: string) => {
  const res = await fetch(`${p.url()}${path}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
  return { status: res.status, body: (await res.json()) as any };
};

async function converse(p: TestParley) {
  const w = await startWidgetSession(p.url(), { customerId: 'carol', email: 'carol@example.com' });
  w.send({ type: 'message', id: 'm1', text: 'status of order 1001' });
  await w.next((f) => f.type === 'message');
  w.close();
  await p.services.telemetry.flush();
}

beforeAll(async () => {
  withText = await startParley({ config: { telemetry: { store_text: true } } });
  withoutText = await startParley();
  parleys.push(withText, withoutText);
  await converse(withText);
  await converse(withoutText);
}, 60_000);
afterAll(async () => {
  for (const p of parleys) await p.close();
});

describe('summary: fitted and by channel', () => {
  it('fit=1 starts a day-long window at its first record, in 10 s buckets (at least 12); without it, the day in 30 min buckets', async () => {
    const { body: first } = await get(withText, '/api/v1/telemetry/events?limit=1');
    const firstAt: number = first.items[0].at;
    const until = firstAt + 60_000;
    const since = until - 24 * 3600_000;
    const fitted = (await get(withText, `/api/v1/telemetry/summary?since=${since}&until=${until}&bucketMs=1800000&fit=1`)).body;
    expect(fitted.bucketMs).toBe(10_000);
    expect(fitted.since).toBe(Math.min(Math.floor(firstAt / 10_000) * 10_000, until - 12 * 10_000));
    expect(fitted.buckets.length).toBeGreaterThanOrEqual(12);
    expect(fitted.totals.messagesIn).toBe(1);
    const whole = (await get(withText, `/api/v1/telemetry/summary?since=${since}&until=${until}&bucketMs=1800000`)).body;
    expect([whole.since, whole.bucketMs, whole.buckets.length]).toEqual([since, 1_800_000, 48]);
    // an empty window stays as asked
    const empty = (await get(withText, `/api/v1/telemetry/summary?since=${since - 86_400_000}&until=${since}&bucketMs=1800000&fit=1`)).body;
    expect([empty.since, empty.bucketMs]).toEqual([since - 86_400_000, 1_800_000]);
  });

  it("channel keeps that channel's records only (LLM calls by their conversation's channel)", async () => {
    const web = (await get(withText, '/api/v1/telemetry/summary?channel=web')).body;
    const wa = (await get(withText, '/api/v1/telemetry/summary?channel=whatsapp')).body;
    expect([web.totals.messagesIn, web.totals.turnCalls > 0 ? 'calls' : 'none']).toEqual([1, 'calls']);
    expect(wa.totals).toMatchObject({ messagesIn: 0, messagesOut: 0, conversations: 0 });
    expect(wa.llm.calls.reduce((a: number, b: number) => a + b, 0)).toBe(0);
  });
});

describe('conversations for the dashboard', () => {
  it("name the customer by email; the last message's text only with store_text", async () => {
    const [row] = (await get(withText, '/api/v1/telemetry/conversations')).body.items;
    const [reply] = (await get(withText, '/api/v1/telemetry/events?type=message.out&order=desc&limit=1')).body.items;
    expect(reply.data.text).toEqual(expect.any(String));
    expect(row).toMatchObject({ customer: { email: 'carol@example.com' }, lastMessage: { from: 'assistant', text: reply.data.text, at: reply.at } });
    // text recorded while store_text was on (it stays until retention) is not shown once it is off
    const conversationId = row.conversationId;
    withoutText.services.telemetry.event({ type: 'message.out', conversationId, channel: 'web', data: { text: 'words kept from before' } });
    await withoutText.services.telemetry.flush();
    const [bare] = (await get(withoutText, '/api/v1/telemetry/conversations')).body.items;
    expect(bare.customer).toEqual({ email: 'carol@example.com' });
    expect(bare).not.toHaveProperty('lastMessage');
    expect((await get(withText, '/api/v1/telemetry/conversations?channel=whatsapp')).body.items).toEqual([]);
    expect((await get(withText, '/api/v1/telemetry/conversations?channel=web')).body.items).toHaveLength(1);
  });

  it('bad parameters are answered 400 with a code', async () => {
    for (const path of ['/api/v1/telemetry/summary?channel=sms', '/api/v1/telemetry/summary?fit=yes', '/api/v1/telemetry/conversations?channel=x']) {
      const { status, body } = await get(withText, path);
      expect(status, path).toBe(400);
      expect(body.error.code, path).toEqual(expect.any(String));
    }
  });
});
