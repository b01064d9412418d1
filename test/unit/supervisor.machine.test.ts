import { describe, expect, it } from 'vitest';
import { createActor, fromCallback } from 'xstate';
import { supervisorMachine } from '../../machines/supervisor.ts';
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
  const passivated: { idleBefore: number }[] = [];
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
      passivate: (_, p) => void passivated.push(p),
      childFailed: (_, p) => void failed.push(p.childId),
    },
  });
  const actor = createActor(machine, {
    clock: xstateClock(clock),
    input: { maxSdkConnections: o.maxSdkConnections ?? 32, idleMs: o.idleMs ?? 60_000 },
  }).start();
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

  it('counts conversations by lifecycle events and, on tick, asks to passivate those idle longer than idleMs', () => {
    const { actor, passivated, clock } = start({ idleMs: 60_000 });
    clock.advance(100_000);
    actor.send({ type: 'tick', at: clock.now() });
    expect(passivated).toEqual([]); // nothing active: nothing to ask
    actor.send({ type: 'conversation.activated', conversationId: 'x' });
    actor.send({ type: 'conversation.activated', conversationId: 'y' });
    expect(actor.getSnapshot().context.conversations).toBe(2);
    clock.advance(60_000);
    actor.send({ type: 'tick', at: clock.now() });
    expect(passivated).toEqual([{ idleBefore: 100_000 }]); // idle since before 100 s = idle longer than 60 s at 160 s
    actor.send({ type: 'conversation.passivated', conversationId: 'x' });
    expect(actor.getSnapshot().context.conversations).toBe(1);
    actor.send({ type: 'conversation.passivated', conversationId: 'y' });
    actor.send({ type: 'conversation.passivated', conversationId: 'y' });
    expect(actor.getSnapshot().context.conversations).toBe(0); // never below zero
    actor.send({ type: 'tick', at: clock.now() + 30_000 });
    expect(passivated).toHaveLength(1);
  });
});

describe('supervisor runtime', () => {
  it('reserves slots synchronously, lists live actors and registered externals', () => {
    const clock = createManualClock(0);
    const telemetry = silentTelemetry();
    const passivated: number[] = [];
    const rt = createSupervisorRuntime({
      clock,
      logger: createLogger('silent'),
      telemetry,
      maxSdkConnections: 2,
      idleMs: 1_000,
      passivate: (idleBefore) => void passivated.push(idleBefore),
    });
    expect(rt.sdkSlotsAvailable()).toBe(2);
    const a = rt.reserveSdkSlot();
    const b = rt.reserveSdkSlot();
    expect(a).toBeTypeOf('string');
    expect(b).toBeTypeOf('string');
    expect(rt.reserveSdkSlot()).toBeUndefined();
    expect(rt.sdkSlotsAvailable()).toBe(0);
    rt.sdkConnection(a!)!.send({
      type: 'register',
      functions: [{ name: 'f', description: '', parameters: {}, mode: 'read' }],
      sdk: { name: 's', version: '1' },
      sendProvider: false,
      at: 1,
    });

    const conv = createActor(sdkConnectionMachine, { input: { connectionId: 'fake-conv', connectedAt: 0 } }).start();
    rt.conversationActivated('conv-1', conv);
    rt.conversationActivated('conv-1', conv); // reported twice: counted once
    const live = rt.liveActors();
    expect(live.map((l) => [l.id, l.machine, l.state])).toEqual([
      ['supervisor', 'supervisor', 'running'],
      [a, 'sdkConnection', 'registered'],
      [b, 'sdkConnection', 'open'],
      ['conv-1', 'conversation', 'open'],
    ]);
    expect(live[1].context.functions).toEqual(['f']);
    expect(live[3].context.functions).toEqual({ length: 0 });
    expect(live[0].context.conversations).toBe(1);

    clock.advance(5_000);
    rt.tick();
    expect(passivated).toEqual([4_000]);
    rt.conversationPassivated('conv-1');
    rt.conversationPassivated('conv-1'); // the host may repeat itself
    rt.conversationPassivated('never-seen');
    expect(rt.liveActors()).toHaveLength(3);
    expect(rt.liveActors()[0].context.conversations).toBe(0);
    rt.tick();
    expect(passivated).toEqual([4_000]); // none active: no request

    rt.releaseSdkSlot(a!);
    expect(rt.sdkSlotsAvailable()).toBe(1);

    rt.stop();
    rt.conversationActivated('late', conv); // after shutdown: ignored, no throw
    rt.tick();
  });

  it('a throwing or rejecting passivate effect does not stop the supervisor', async () => {
    for (const passivate of [
      () => {
        throw new Error('host down');
      },
      () => Promise.reject(new Error('host down')),
    ]) {
      const clock = createManualClock(0);
      const rt = createSupervisorRuntime({ clock, logger: createLogger('silent'), telemetry: silentTelemetry(), idleMs: 1, passivate });
      rt.conversationActivated('k', createActor(sdkConnectionMachine, { input: { connectionId: 'k', connectedAt: 0 } }).start());
      clock.advance(10);
      rt.tick();
      await new Promise((r) => setTimeout(r, 0));
      expect(rt.actor.getSnapshot().status).toBe('active');
      expect(rt.reserveSdkSlot()).toBeTypeOf('string');
      rt.stop();
    }
  });
});
