// provider sdk: the id handed to onSend is stable across attempts, waiting
// for a sender uses no attempts and ends when one registers, and is bounded.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { sleep, until } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function start(whatsapp: Record<string, unknown> = {}) {
  const p = await startParley({ config: { channels: { whatsapp: { enabled: true, provider: 'sdk', ...whatsapp } } } });
  open.push(p);
  const ingester = createClient();
  await ingester.listen({ url: p.url(), secret: TEST_SECRET });
  open.push(ingester);
  return { p, ingester };
}

async function sender(p: TestParley, onSend: (m: { to: string; content: string }, meta: { id: string }) => unknown) {
  const c = createClient();
  c.onSend(onSend as never);
  await c.listen({ url: p.url(), secret: TEST_SECRET });
  open.push(c);
  return c;
}

const events = async (p: TestParley, type: string) => {
  await p.services.telemetry.flush();
  const r = await fetch(`${p.url()}/api/v1/telemetry/events?type=${encodeURIComponent(type)}&limit=1000`, {
    headers: { authorization: `Bearer ${TEST_SECRET}` },
  });
  return ((await r.json()) as { items: { data: Record<string, unknown> }[] }).items;
};

describe('provider sdk delivery', () => {
  it('a retried send carries the same id (the outbound job id), so onSend can de-duplicate', async () => {
    const { p, ingester } = await start();
    const ids: string[] = [];
    await sender(p, (_m, meta) => {
      ids.push(meta.id);
      if (ids.length === 1) throw new Error('provider hiccup');
      return { messageId: 'own-1' };
    });
    await ingester.ingest({ channel: 'whatsapp', from: '+15550201010', text: 'hello', messageId: 'in-1' });
    await until(
      () => ids,
      (x) => x.length >= 2,
    );
    expect(ids[0]).toMatch(/^out:/);
    expect(ids[1]).toBe(ids[0]);
  });

  it('onSend that never answers is uncertain: resent with the same id only after uncertain_grace_ms', async () => {
    // The grace runs from the attempt's start, which the handler sees later by the marker's commit and the delivery (on
    // a busy machine half a second and more): a grace long against both, and a margin for them in the check.
    const { p, ingester } = await start({ send_timeout_ms: 300, uncertain_grace_ms: 3000 });
    const calls: { id: string; at: number }[] = [];
    await sender(p, (_m, meta) => {
      calls.push({ id: meta.id, at: Date.now() });
      return calls.length === 1 ? new Promise(() => {}) : {};
    });
    await ingester.ingest({ channel: 'whatsapp', from: '+15550201011', text: 'hello' });
    await until(
      () => calls,
      (c) => c.length >= 2,
      15_000,
    );
    expect(calls[1].id).toBe(calls[0].id);
    // A resend at the send timeout (300 ms) and its backoff would come well within 2 s.
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(2000);
  });

  it('waiting for a sender uses no attempts: with max_send_attempts 1, a sender registering later gets the reply within ~200 ms', async () => {
    const { p, ingester } = await start({ max_send_attempts: 1 });
    await ingester.ingest({ channel: 'whatsapp', from: '+15550202020', text: 'hello' });
    await until(
      () => p.runtime.whatsapp.outboundQueue.depth(),
      (d) => d === 1,
    );
    await sleep(1500); // longer than several ordinary backoff attempts
    const sent: number[] = [];
    const registeredAt = Date.now();
    await sender(p, () => void sent.push(Date.now()));
    await until(
      () => sent,
      (s) => s.length >= 1,
    );
    // Expedited, not found by the queue's next look (several seconds away); generous for a busy machine.
    expect(sent[0] - registeredAt).toBeLessThan(1000);
    expect(await p.runtime.whatsapp.outboundQueue.deadLetters()).toEqual([]);
  });

  it('the wait is bounded by sdk_wait_ms: then the reply is dead-lettered (telemetry) and not sent later', async () => {
    const { p, ingester } = await start({ sdk_wait_ms: 600 });
    await ingester.ingest({ channel: 'whatsapp', from: '+15550203030', text: 'hello' });
    const dead = await until(
      () => events(p, 'whatsapp.dead_letter'),
      (e) => e.length >= 1,
    );
    expect(String(dead[0].data.error)).toMatch(/sdk_wait_ms/);
    const sent: unknown[] = [];
    await sender(p, () => void sent.push(1));
    await sleep(400);
    expect(sent).toEqual([]);
  });
});
