import { describe, expect, it } from 'vitest';
import { createActor, fromCallback } from 'xstate';
import { supervisorMachine, idleConversations } from '../../machines/supervisor.ts';
import { sdkConnectionMachine } from '../../machines/sdkConnection.ts';
import { createManualClock, xstateClock } from '../../src/clock.ts';
import { createSupervisorRuntime } from '../../src/runtime/supervisor.ts';
import { createLogger } from '../../src/logger.ts';
import type { Telemetry } from '../../src/telemetry/types.ts';

const silentTelemetry = (): Telemetry & { events: { type: string }[] } => {
  const events: { type: string }[] = [];
  return {
    events,
    event: (e) => void events.push(e),
    turnCall() {},
    subscribe: () => () => {},
    flush: async () => {},
    close: async () => {},
  };
};

function start(o: { maxSdkConnections?: number; idleMs?: number; failingChild?: boolean } = {}) {
  const clock = createManualClock(0);
  const passivated: string[][] = [];
  const closes: { connectionId: string; code: number }[] = [];
  const failed: string[] = [];
  const child = o.failingChild
    ? fromCallback(({ receive }) => {
        receive((e) => {
          if (e.type === 'socket.closed') throw new Error('boom');
        });
      })
    : sdkConnectionMachine.provide({ actions: { closeSocket: (_, p) => void closes.push(p) } });
  const machine = supervisorMachine.provide({
    actors: { sdkConnection: child as typeof sdkConnectionMachine },
    actions: {
      passivate: (_, p) => void passivated.push(p.conversationIds),
      childFailed: (_, p) => void failed.push(p.childId),
    },
  });
  const actor = createActor(machine, { clock: xstateClock(clock), input: { maxSdkConnections: o.maxSdkConnections ?? 32, idleMs: o.idleMs ?? 60_000 } }).start();
  return { clock, actor, passivated, closes, failed };
}

describe('supervisor machine', () => {
  it('spawns one sdkConnection child per connection and refuses the 33rd', () => {
    const { actor } = start();
    for (let i = 0; i < 32; i++) actor.send({ type: 'sdk.connected', connectionId: `c${i}` });
    expect(Object.keys(actor.getSnapshot().children)).toHaveLength(32);
    actor.send({ type: 'sdk.connected', connectionId: 'c32' });
    const snap = actor.getSnapshot();
    expect(Object.keys(snap.children)).toHaveLength(32);
    expect(snap.children.c32).toBeUndefined();
    expect(snap.context.refusedSdkConnections).toBe(1);
    // a closed slot can be taken again
    actor.send({ type: 'sdk.closed', connectionId: 'c0' });
    actor.send({ type: 'sdk.connected', connectionId: 'c32' });
    expect(actor.getSnapshot().children.c32).toBeDefined();
    expect(Object.keys(actor.getSnapshot().context.sdkConnections)).toHaveLength(32);
  });

  it('forwards socket.closed to the child and frees the slot', () => {
    const { actor } = start();
    actor.send({ type: 'sdk.connected', connectionId: 'a' });
    const child = actor.getSnapshot().children.a!;
    actor.send({ type: 'sdk.closed', connectionId: 'a', code: 1000 });
    expect(child.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().children.a).toBeUndefined();
    expect(actor.getSnapshot().context.sdkConnections).toEqual({});
  });

  it('keeps the slot after the child timed out until the socket actually closes', () => {
    const { actor, clock, closes } = start();
    actor.send({ type: 'sdk.connected', connectionId: 'a' });
    clock.advance(15_000);
    expect(closes).toEqual([{ connectionId: 'a', code: 4008, reason: 'register timeout' }]);
    expect(actor.getSnapshot().children.a).toBeUndefined();
    expect(Object.keys(actor.getSnapshot().context.sdkConnections)).toEqual(['a']);
    actor.send({ type: 'sdk.closed', connectionId: 'a', code: 4008 }); // child already gone: no throw
    expect(actor.getSnapshot().context.sdkConnections).toEqual({});
    expect(actor.getSnapshot().status).toBe('active');
  });

  it("survives a child's failure and frees its slot", () => {
    const { actor, failed } = start({ failingChild: true });
    actor.send({ type: 'sdk.connected', connectionId: 'a' });
    actor.send({ type: 'sdk.connected', connectionId: 'b' });
    actor.send({ type: 'sdk.closed', connectionId: 'a' });
    expect(actor.getSnapshot().status).toBe('active');
    expect(failed).toEqual(['a']);
    expect(actor.getSnapshot().context.failedChildren).toBe(1);
    expect(Object.keys(actor.getSnapshot().context.sdkConnections)).toEqual(['b']);
    expect(actor.getSnapshot().children.b).toBeDefined();
    actor.send({ type: 'sdk.connected', connectionId: 'c' });
    expect(actor.getSnapshot().children.c).toBeDefined();
  });

  it('asks to passivate conversations idle longer than idleMs on tick', () => {
    const { actor, passivated } = start({ idleMs: 60_000 });
    actor.send({ type: 'conversation.activated', conversationId: 'x', at: 0 });
    actor.send({ type: 'conversation.activated', conversationId: 'y', at: 0 });
    actor.send({ type: 'conversation.touched', conversationId: 'y', at: 50_000 });
    actor.send({ type: 'tick', at: 60_000 });
    expect(passivated).toEqual([]); // exactly idleMs is not "longer than"
    actor.send({ type: 'tick', at: 60_001 });
    expect(passivated).toEqual([['x']]);
    actor.send({ type: 'conversation.passivated', conversationId: 'x' });
    actor.send({ type: 'tick', at: 110_001 });
    expect(passivated).toEqual([['x'], ['y']]);
    expect(actor.getSnapshot().context.conversations).toEqual({ y: 50_000 });
    // touching an unknown conversation does not resurrect it
    actor.send({ type: 'conversation.touched', conversationId: 'x', at: 120_000 });
    expect(actor.getSnapshot().context.conversations).toEqual({ y: 50_000 });
    expect(idleConversations({ a: 0, b: 10 }, 100, 95)).toEqual(['a']);
  });
});

describe('supervisor runtime', () => {
  it('reserves slots synchronously, lists live actors and registered externals', () => {
    const clock = createManualClock(0);
    const telemetry = silentTelemetry();
    const passivated: string[][] = [];
    const rt = createSupervisorRuntime({ clock, logger: createLogger('silent'), telemetry, maxSdkConnections: 2, idleMs: 1_000, passivate: (ids) => void passivated.push(ids) });
    expect(rt.sdkSlotsAvailable()).toBe(2);
    const a = rt.reserveSdkSlot();
    const b = rt.reserveSdkSlot();
    expect(a).toBeTypeOf('string');
    expect(b).toBeTypeOf('string');
    expect(rt.reserveSdkSlot()).toBeUndefined();
    expect(rt.sdkSlotsAvailable()).toBe(0);
    rt.sdkConnection(a!)!.send({ type: 'register', functions: [{ name: 'f', description: '', parameters: {}, mode: 'read' }], sdk: { name: 's', version: '1' }, sendProvider: false, at: 1 });

    const conv = createActor(sdkConnectionMachine, { input: { connectionId: 'fake-conv', connectedAt: 0 } }).start();
    rt.register('conv-1', 'conversation', conv);
    const live = rt.liveActors();
    expect(live.map((l) => [l.id, l.machine, l.state])).toEqual([
      ['supervisor', 'supervisor', 'running'],
      [a, 'sdkConnection', 'registered'],
      [b, 'sdkConnection', 'open'],
      ['conv-1', 'conversation', 'open'],
    ]);
    expect(live[1].context.functions).toEqual(['f']);
    expect(live[3].context.functions).toEqual({ length: 0 });
    rt.unregister('conv-1');
    expect(rt.liveActors()).toHaveLength(3);

    rt.releaseSdkSlot(a!);
    expect(rt.sdkSlotsAvailable()).toBe(1);

    rt.actor.send({ type: 'conversation.activated', conversationId: 'k', at: 0 });
    rt.actor.send({ type: 'tick', at: 1_001 });
    expect(passivated).toEqual([['k']]);
    rt.stop();
  });

  it('a throwing passivate effect does not stop the supervisor', () => {
    const rt = createSupervisorRuntime({
      clock: createManualClock(0),
      logger: createLogger('silent'),
      telemetry: silentTelemetry(),
      idleMs: 1,
      passivate: () => {
        throw new Error('host down');
      },
    });
    rt.actor.send({ type: 'conversation.activated', conversationId: 'k', at: 0 });
    rt.actor.send({ type: 'tick', at: 10 });
    expect(rt.actor.getSnapshot().status).toBe('active');
    expect(rt.reserveSdkSlot()).toBeTypeOf('string');
    rt.stop();
  });
});
