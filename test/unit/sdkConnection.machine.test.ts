import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { sdkConnectionMachine, registrationProblem, type SdkFunctionDeclaration } from '../../machines/sdkConnection.ts';
import { createManualClock, xstateClock } from '../../src/clock.ts';

const fn = (name: string): SdkFunctionDeclaration => ({ name, description: '', parameters: { type: 'object' }, mode: 'read' });

function start() {
  const clock = createManualClock(1_000);
  const calls: { action: string; params: unknown }[] = [];
  const record = (action: string) => (_: unknown, params: unknown) => void calls.push({ action, params });
  const machine = sdkConnectionMachine.provide({
    actions: {
      replyRegistered: record('replyRegistered'),
      publishCatalog: record('publishCatalog'),
      unpublishCatalog: record('unpublishCatalog'),
      closeSocket: record('closeSocket'),
      rejectRegister: record('rejectRegister'),
    },
  });
  const actor = createActor(machine, { clock: xstateClock(clock), input: { connectionId: 'c1', connectedAt: clock.now() } }).start();
  return { clock, calls, actor };
}

const register = (functions: SdkFunctionDeclaration[]) =>
  ({ type: 'register', functions, sdk: { name: 'test', version: '1' }, sendProvider: true, at: 5 }) as const;

describe('sdkConnection machine', () => {
  it('goes to registered on a valid register within 15 s, publishing and replying', () => {
    const { clock, calls, actor } = start();
    clock.advance(14_000);
    actor.send(register([fn('lookup_order'), fn('cancel_order')]));
    expect(actor.getSnapshot().value).toBe('registered');
    expect(calls.map((c) => c.action)).toEqual(['publishCatalog', 'replyRegistered']);
    expect(calls[1].params).toEqual({ connectionId: 'c1', functions: 2 });
    expect(actor.getSnapshot().context).toMatchObject({ connectionId: 'c1', connectedAt: 1_000, sendProvider: true, sdk: { name: 'test', version: '1' } });
    // the register timer is gone once registered
    clock.advance(60_000);
    expect(actor.getSnapshot().value).toBe('registered');
    expect(calls.some((c) => c.action === 'closeSocket')).toBe(false);
  });

  it('closes with 4008 exactly at 15 s without a register, not before', () => {
    const { clock, calls, actor } = start();
    clock.advance(14_900);
    expect(actor.getSnapshot().value).toBe('open');
    expect(calls).toEqual([]);
    clock.advance(99);
    expect(actor.getSnapshot().value).toBe('open');
    clock.advance(1);
    expect(actor.getSnapshot().value).toBe('closed');
    expect(actor.getSnapshot().status).toBe('done');
    expect(calls).toEqual([{ action: 'closeSocket', params: { connectionId: 'c1', code: 4008, reason: 'register timeout' } }]);
  });

  it('refuses a registration that declares a name twice and stays open', () => {
    const { calls, actor } = start();
    actor.send(register([fn('a'), fn('a')]));
    expect(actor.getSnapshot().value).toBe('open');
    expect(calls).toEqual([{ action: 'rejectRegister', params: { connectionId: 'c1', reason: 'function "a" is declared twice' } }]);
    expect(registrationProblem([fn('a'), fn('b')])).toBeUndefined();
  });

  it('socket.closed from registered unpublishes and ends', () => {
    const { calls, actor } = start();
    actor.send(register([fn('a')]));
    actor.send({ type: 'socket.closed', code: 1000 });
    expect(actor.getSnapshot().value).toBe('closed');
    expect(calls.at(-1)).toEqual({ action: 'unpublishCatalog', params: { connectionId: 'c1' } });
  });

  it('socket.closed while open ends without a close', () => {
    const { clock, calls, actor } = start();
    actor.send({ type: 'socket.closed' });
    expect(actor.getSnapshot().status).toBe('done');
    clock.advance(20_000);
    expect(calls.map((c) => c.action)).toEqual(['unpublishCatalog']);
  });

  it('a second register replaces the functions', () => {
    const { calls, actor } = start();
    actor.send(register([fn('a')]));
    actor.send(register([fn('a'), fn('b'), fn('c')]));
    expect(actor.getSnapshot().context.functions.map((f) => f.name)).toEqual(['a', 'b', 'c']);
    expect(calls.filter((c) => c.action === 'replyRegistered').map((c) => c.params)).toEqual([
      { connectionId: 'c1', functions: 1 },
      { connectionId: 'c1', functions: 3 },
    ]);
  });
});
