// node-rpc between two "nodes" in this process, on the LMDB engine's in-process bus (it delivers every message to
// every subscriber, the sender included, as NOTIFY does on PostgreSQL): answers, errors, timeouts and dead targets
// all come back as results, never as a rejection or a hang.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import { createNodeRpc, type NodeRpc } from '../../src/cluster/node-rpc.ts';
import { createProcessBus } from '../../src/store/lmdb/bus.ts';
import type { ClusterBus } from '../../src/store/repos.ts';

const methods = {
  double: { request: z.object({ n: z.number() }), response: z.object({ doubled: z.number() }) },
  never: { request: z.object({}), response: z.object({}) },
};

const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((s) => s()));

function node(bus: ClusterBus, id: { current: string }, alive: (nodeId: string) => boolean = () => true): NodeRpc<typeof methods> {
  const rpc = createNodeRpc({ bus, methods, nodeId: () => id.current, alive, clock: createClock(), logger: createLogger('silent'), checkEveryMs: 20 });
  rpc.start();
  stops.push(() => rpc.stop());
  return rpc;
}

describe('node-rpc', () => {
  it('a call reaches the named node’s handler, which sees the caller; the answer comes back parsed', async () => {
    const bus = createProcessBus();
    const a = node(bus, { current: 'a' });
    const b = node(bus, { current: 'b' });
    const seen: string[] = [];
    b.handle('double', async ({ n }, from) => {
      seen.push(from);
      return { doubled: n * 2 };
    });
    a.handle('double', async () => ({ doubled: -1 })); // a hears its own request too, and must not answer it
    expect(await a.call('b', 'double', { n: 21 }, 1000)).toEqual({ ok: true, body: { doubled: 42 } });
    expect(seen).toEqual(['a']);
    expect(a.pending()).toBe(0);
  });

  it('a handler that throws, a method with no handler and a body its schema refuses come back as errors', async () => {
    const bus = createProcessBus();
    const a = node(bus, { current: 'a' });
    const b = node(bus, { current: 'b' });
    b.handle('double', async ({ n }) => {
      if (n < 0) throw new Error('negative');
      return { doubled: n * 2 };
    });
    expect(await a.call('b', 'double', { n: -1 }, 1000)).toEqual({ ok: false, error: { code: 'failed', message: 'double failed on node b: negative' } });
    expect(await a.call('b', 'never', {}, 1000)).toEqual({ ok: false, error: { code: 'refused', message: 'node b has no handler for never' } });
    const refused = await a.call('b', 'double', { n: 'x' } as unknown as { n: number }, 1000);
    expect(refused).toMatchObject({ ok: false, error: { code: 'refused' } });
    if (!refused.ok) expect(refused.error.message).toMatch(/^double: the request was refused/);
  });

  it('an answer the response schema refuses is an error, not a value of the wrong shape', async () => {
    const bus = createProcessBus();
    const a = node(bus, { current: 'a' });
    const b = node(bus, { current: 'b' });
    b.handle('double', async () => ({ doubled: 'lots' }) as unknown as { doubled: number });
    expect(await a.call('b', 'double', { n: 1 }, 1000)).toMatchObject({ ok: false, error: { code: 'refused' } });
  });

  it('no answer: timeout after the call’s timeout, not before', async () => {
    const bus = createProcessBus();
    const a = node(bus, { current: 'a' });
    const b = node(bus, { current: 'b' });
    b.handle('never', () => new Promise(() => undefined));
    const started = performance.now();
    const r = await a.call('b', 'never', {}, 150);
    const took = performance.now() - started;
    expect(r).toEqual({ ok: false, error: { code: 'timeout', message: 'node b did not answer never within 150 ms' } });
    expect(took).toBeGreaterThanOrEqual(145);
    expect(took).toBeLessThan(1000);
    expect(a.pending()).toBe(0);
  });

  it('a target seen dead fails at once; one that dies mid-call fails as soon as it is seen dead', async () => {
    const bus = createProcessBus();
    const dead = new Set<string>(['c']);
    const a = node(bus, { current: 'a' }, (id) => !dead.has(id));
    const b = node(bus, { current: 'b' });
    b.handle('never', () => new Promise(() => undefined));
    expect(await a.call('c', 'never', {}, 5000)).toEqual({ ok: false, error: { code: 'node_gone', message: 'node c is not alive' } });

    const started = performance.now();
    const call = a.call('b', 'never', {}, 5000);
    setTimeout(() => dead.add('b'), 100);
    expect(await call).toEqual({ ok: false, error: { code: 'node_gone', message: 'node b is gone' } });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('requests go to the node’s id now: after it rejoined under another id, the old one is not answered', async () => {
    const bus = createProcessBus();
    const a = node(bus, { current: 'a' });
    const bId = { current: 'b' };
    const b = node(bus, bId);
    b.handle('double', async ({ n }) => ({ doubled: n * 2 }));
    bId.current = 'b.2';
    expect(await a.call('b', 'double', { n: 1 }, 150)).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(await a.call('b.2', 'double', { n: 1 }, 1000)).toEqual({ ok: true, body: { doubled: 2 } });
  });

  it('stopping fails the calls still waiting; a stopped rpc or a bus this node does not hear fails at once', async () => {
    const bus = createProcessBus();
    const a = node(bus, { current: 'a' });
    const b = node(bus, { current: 'b' });
    b.handle('never', () => new Promise(() => undefined));
    const call = a.call('b', 'never', {}, 5000);
    await new Promise((r) => setTimeout(r, 20));
    a.stop();
    expect(await call).toEqual({ ok: false, error: { code: 'unavailable', message: 'this node is stopping' } });
    expect(await a.call('b', 'never', {}, 5000)).toEqual({ ok: false, error: { code: 'unavailable', message: 'the cluster rpc is not started' } });

    const deaf = createProcessBus();
    const c = node(deaf, { current: 'c' });
    await deaf.close();
    expect(await c.call('b', 'never', {}, 5000)).toEqual({ ok: false, error: { code: 'unavailable', message: 'this node does not hear the cluster bus now' } });
  });
});
