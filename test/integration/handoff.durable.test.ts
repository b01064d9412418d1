// Issue 35: the handoff's timers are durable. A conversation waiting for a person is resumed when Parley starts again
// after a SIGKILL, and its offline notice (and, when set, its hand-back) comes at the time it was due. Real child
// processes on one store (LMDB; PostgreSQL with the postgres project), the clock moved through /__test__/clock.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnParley, tempDir, TEST_SECRET, type ParleyProcess } from '../support/parley.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
const MIN = 60_000;

async function moveClock(p: ParleyProcess, offsetMs: number) {
  const res = await fetch(`${p.url}/__test__/clock`, { method: 'POST', headers: auth, body: JSON.stringify({ offsetMs }) });
  expect(res.status).toBe(200);
}

async function widget(url: string, customerId: string): Promise<WidgetClient> {
  const w = await connectWidget(url);
  cleanups.push(() => w.close());
  w.send({ type: 'init', customerId, email: `${customerId}@example.com` });
  await w.next((f) => f.type === 'ready', 20_000);
  return w;
}

describe('handoff timers across a crash', () => {
  it(
    'SIGKILL while waiting for a person: after the restart the offline notice comes when due, then the hand-back (return_to_assistant_after_minutes), each once',
    { timeout: 120_000 },
    async () => {
      const storagePath = tempDir();
      const config = { handoff: { offline_after_minutes: 10, return_to_assistant_after_minutes: 60 } };
      const first = await spawnParley({ storagePath, config });
      cleanups.push(() => first.kill());
      const w = await widget(first.url, 'crash-h');
      w.send({ type: 'message', id: 'm1', text: 'I want to talk to a person' });
      await w.next((f) => f.type === 'ack' && f.id === 'm1', 20_000);
      await w.next((f) => f.type === 'handoff_notice' && f.kind === 'open', 20_000);
      await first.kill('SIGKILL');
      w.close();

      const second = await spawnParley({ storagePath, config, port: Number(new URL(first.url).port) });
      cleanups.push(() => second.kill());
      const w2 = await widget(second.url, 'crash-h');
      // Not yet due: nothing but the notice of the handoff under way.
      await w2.next((f) => f.type === 'handoff_notice' && f.kind === 'open', 20_000);
      await moveClock(second, 11 * MIN);
      expect(await w2.next((f) => f.type === 'handoff_notice' && f.kind === 'offline', 20_000)).toMatchObject({ askEmail: true });
      await moveClock(second, 61 * MIN);
      expect(await w2.next((f) => f.type === 'status' && f.mode === 'assistant', 20_000)).toMatchObject({ mode: 'assistant' });
      const read = (await (await fetch(`${second.url}/conversations/conv_web_crash-h`, { headers: auth })).json()) as {
        state: string;
        messages: { role: string; text: string; data?: Record<string, unknown> }[];
      };
      expect(read.messages.filter((m) => m.role === 'handoff').map((m) => m.text)).toEqual(['requested', 'offline', 'released']);
      expect(read.messages.at(-1)?.data).toMatchObject({ by: 'idle' });
    },
  );
});
