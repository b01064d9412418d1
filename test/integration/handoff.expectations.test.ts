// Issue 35, part 5: the customer knows what to expect while waiting for a person. Real server, real store (LMDB; the
// postgres project runs it on PostgreSQL), the widget protocol over a real socket, the offline LLM (it hands over when
// asked for a person). Time is the injected clock, frozen (it moves only when the test moves it), so waits are exact.
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock } from '../../src/clock.ts';
import { frozenClock } from '../support/frozen-clock.ts';
import type { ConfigInput } from '../../src/config/schema.ts';
import { startParley, TEST_SECRET, type TestParley } from '../support/parley.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
const MIN = 60_000;

type DeepPartialConfig = Parameters<typeof startParley>[0] extends infer O ? (O extends { config?: infer C } ? C : never) : never;

async function parley(clock: Clock, config: DeepPartialConfig = {}): Promise<TestParley> {
  const p = await startParley({ clock, config });
  open.push(p);
  return p;
}

async function widget(p: TestParley, customerId: string): Promise<WidgetClient> {
  const w = await startWidgetSession(p.url(), { customerId, email: `${customerId}@example.com` });
  open.push(w);
  return w;
}

async function askForPerson(w: WidgetClient, id = 'm1') {
  w.send({ type: 'message', id, text: 'I want to talk to a person' });
  await w.next((f) => f.type === 'ack' && f.id === id);
  await w.next((f) => f.type === 'status' && f.mode === 'human');
}

async function agentSays(p: TestParley, conversationId: string, text: string, name = 'Alex') {
  const res = await fetch(`${p.url()}/conversations/${conversationId}/messages`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ text, author: { name } }),
  });
  expect(res.status).toBe(201);
}

async function stateOf(p: TestParley, conversationId: string): Promise<string> {
  const res = await fetch(`${p.url()}/conversations/${conversationId}`, { headers: auth });
  return ((await res.json()) as { state: string }).state;
}

/** Polls until `check` passes (generous deadline: the machine is busy). */
async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const BERLIN: ConfigInput['handoff'] = {
  business_hours: {
    time_zone: 'Europe/Berlin',
    weekly: { mon: ['09:00-17:00'], tue: ['09:00-17:00'], wed: ['09:00-17:00'], thu: ['09:00-17:00'], fri: ['09:00-17:00'] },
  },
};

describe('what the customer waiting for a person is told', () => {
  it('outside opening hours: when the team is back (Monday 09:00 Berlin after the clocks change: 07:00 UTC); an email address may be left, once, and is stored with the customer', async () => {
    // Friday 27 March 2026, 17:30 in Berlin (16:30 UTC); summer time starts on Sunday 29 March.
    const clock = frozenClock(Date.UTC(2026, 2, 27, 16, 30));
    const p = await parley(clock, { handoff: BERLIN });
    const w = await widget(p, 'cust-closed');
    await askForPerson(w);
    const notice = await w.next((f) => f.type === 'handoff_notice');
    expect(notice).toEqual({
      type: 'handoff_notice',
      kind: 'closed',
      timeZone: 'Europe/Berlin',
      backAt: Date.UTC(2026, 2, 30, 7, 0),
      askEmail: true,
      at: clock.now(),
    });

    w.send({ type: 'contact', id: 'c1', email: 'not an address' });
    expect(await w.next((f) => f.type === 'error')).toMatchObject({ code: 'invalid_email', id: 'c1' });
    w.send({ type: 'contact', id: 'c2', email: ' ada@example.com ' });
    expect(await w.next((f) => f.type === 'contact_saved')).toEqual({ type: 'contact_saved', id: 'c2', email: 'ada@example.com' });
    const customer = await p.services.store.customers.get('cust-closed');
    expect(customer?.contact).toEqual({ email: 'ada@example.com', at: clock.now() });
    // Not an identity: the address finds no one.
    expect(await p.services.store.customers.findBy('email', 'ada@example.com')).toBeUndefined();

    // Another tab (or a reload): told again, without the form, with the address it has.
    const again = await widget(p, 'cust-closed');
    expect(again.frames.find((f) => f.type === 'ready')?.status).toEqual({ mode: 'human' });
    expect(await again.next((f) => f.type === 'handoff_notice')).toMatchObject({ kind: 'closed', askEmail: false, contactEmail: 'ada@example.com' });

    // The offline notice later on: no second form.
    clock.move(10 * MIN);
    expect(await w.next((f) => f.type === 'handoff_notice' && f.kind === 'offline')).toMatchObject({ askEmail: false, contactEmail: 'ada@example.com' });
  });

  it('inside opening hours: the expected wait is the median first agent reply time of recent handoffs', async () => {
    // Wednesday 25 March 2026, 10:00 in Berlin.
    const clock = frozenClock(Date.UTC(2026, 2, 25, 9, 0));
    const p = await parley(clock, { handoff: BERLIN });
    const first = await widget(p, 'cust-a');
    await askForPerson(first);
    // Nothing known yet: no figure.
    expect(await first.next((f) => f.type === 'handoff_notice')).toEqual({ type: 'handoff_notice', kind: 'open', askEmail: false, at: clock.now() });
    clock.move(4 * MIN);
    await agentSays(p, 'conv_web_cust-a', 'Hi, Alex here');
    const second = await widget(p, 'cust-b');
    await askForPerson(second);
    await second.next((f) => f.type === 'handoff_notice');
    clock.move(7 * MIN);
    await agentSays(p, 'conv_web_cust-b', 'Hi, Alex here');
    const third = await widget(p, 'cust-c');
    await p.services.telemetry.flush();
    await askForPerson(third);
    // (4 min + 7 min) / 2
    expect(await third.next((f) => f.type === 'handoff_notice')).toEqual({
      type: 'handoff_notice',
      kind: 'open',
      expectedWaitMs: 5.5 * MIN,
      askEmail: false,
      at: clock.now(),
    });
  });

  it('no agent within offline_after_minutes: the customer is asked for an email address once and the team keeps the conversation; nothing hands it back silently', async () => {
    const clock = frozenClock(Date.UTC(2026, 2, 25, 9, 0));
    const p = await parley(clock);
    const w = await widget(p, 'cust-off');
    await askForPerson(w);
    await w.next((f) => f.type === 'handoff_notice' && f.kind === 'open');
    clock.move(10 * MIN - 1000);
    clock.move(1000);
    expect(await w.next((f) => f.type === 'handoff_notice')).toEqual({ type: 'handoff_notice', kind: 'offline', askEmail: true, at: clock.now() });
    w.send({ type: 'contact', id: 'c1', email: 'off@example.com' });
    await w.next((f) => f.type === 'contact_saved');
    // Hours and a day later: still with the team, nothing more said.
    clock.move(2 * 60 * MIN);
    clock.move(24 * 60 * MIN);
    w.send({ type: 'message', id: 'm2', text: 'still there?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm2');
    expect(await stateOf(p, 'conv_web_cust-off')).toBe('withHuman');
    const read = (await (await fetch(`${p.url()}/conversations/conv_web_cust-off`, { headers: auth })).json()) as {
      messages: { role: string; text: string }[];
    };
    expect(read.messages.filter((m) => m.role === 'handoff').map((m) => m.text)).toEqual(['requested', 'offline']);
    expect(w.frames.filter((f) => f.type === 'handoff_notice' && f.kind === 'offline')).toHaveLength(1);
    expect(w.frames.filter((f) => f.type === 'status' && f.mode === 'assistant')).toEqual([]);
    expect(w.frames.filter((f) => f.type === 'message' && f.role === 'assistant')).toEqual([]);
  });

  it('with return_to_assistant_after_minutes: handed back after that long without an agent message, and the customer is told', async () => {
    const clock = frozenClock(Date.UTC(2026, 2, 25, 9, 0));
    const p = await parley(clock, { handoff: { return_to_assistant_after_minutes: 30 } });
    const w = await widget(p, 'cust-ret');
    await askForPerson(w);
    clock.move(20 * MIN);
    await agentSays(p, 'conv_web_cust-ret', 'Looking into it');
    await w.next((f) => f.type === 'message' && f.role === 'agent');
    clock.move(30 * MIN - 1000);
    expect(await stateOf(p, 'conv_web_cust-ret')).toBe('withHuman');
    clock.move(1000);
    expect(await w.next((f) => f.type === 'status' && f.mode === 'assistant')).toMatchObject({ mode: 'assistant' });
    await eventually(
      () => stateOf(p, 'conv_web_cust-ret'),
      (s) => s === 'idle',
      'state',
    );
    const read = (await (await fetch(`${p.url()}/conversations/conv_web_cust-ret`, { headers: auth })).json()) as {
      messages: { role: string; text: string; data?: unknown }[];
    };
    expect(read.messages.filter((m) => m.role === 'handoff').at(-1)).toMatchObject({ text: 'released', data: { phase: 'released', by: 'idle' } });
  });
});
