// The composition root's lifecycle (src/wiring/lifecycle.ts, ports.ts): parts as fastify plugins start in
// registration order and stop in the reverse, on a real server on 127.0.0.1:0; a part that cannot start fails
// `started()` and the parts after it are not started; a stop step that fails is logged and the next one runs; a port read before its
// part is made fails loudly.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createLifecycle, type LifecycleStep } from '../../src/wiring/lifecycle.ts';
import { port } from '../../src/wiring/ports.ts';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close().catch(() => undefined);
});

function setUp() {
  const steps: string[] = [];
  const ran: string[] = [];
  const lifecycle = createLifecycle({ logger: createLogger('silent'), record: (s: LifecycleStep) => steps.push(`${s.phase}:${s.part}`) });
  const app = Fastify();
  apps.push(app);
  return { app, steps, ran, lifecycle };
}

describe('parts on fastify’s lifecycle', () => {
  it('start in registration order and stop in the reverse; start() waits for every onListen', async () => {
    const { app, steps, ran, lifecycle } = setUp();
    const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 50));
    await app.register(
      lifecycle.part('a', { ready: () => void ran.push('a joined'), listen: () => void ran.push('a up'), close: () => void ran.push('a down') }),
    );
    await app.register(
      lifecycle.part('b', {
        listen: async () => {
          await slow();
          ran.push('b up');
        },
        preClose: () => void ran.push('b closing'),
        close: () => void ran.push('b down'),
      }),
    );
    const slowClose = async () => {
      await slow();
      ran.push('c down');
    };
    await app.register(lifecycle.part('c', { listen: () => void ran.push('c up'), close: slowClose }));
    await app.register(lifecycle.last());
    await app.listen({ host: '127.0.0.1', port: 0 });
    await lifecycle.started();
    // b's start is slow: c starts only once it is done (fastify alone would not wait), and start() waits for both.
    expect(ran).toEqual(['a joined', 'a up', 'b up', 'c up']);
    await app.close();
    expect(ran.slice(4)).toEqual(['b closing', 'c down', 'b down', 'a down']);
    expect(steps).toEqual(['ready:a', 'listen:a', 'listen:b', 'listen:c', 'preClose:b', 'close:c', 'close:b', 'close:a']);
  });

  it('a part that cannot start fails started() and the parts after it do not start; a failed stop step does not stop the others', async () => {
    const { app, ran, lifecycle } = setUp();
    await app.register(lifecycle.part('a', { listen: () => void ran.push('a up'), close: () => void ran.push('a down') }));
    const broken = () => {
      throw new Error('b cannot start');
    };
    await app.register(lifecycle.part('b', { listen: broken, close: broken }));
    await app.register(lifecycle.part('c', { listen: () => void ran.push('c up'), close: () => void ran.push('c down') }));
    await app.register(lifecycle.last());
    await app.listen({ host: '127.0.0.1', port: 0 });
    await expect(lifecycle.started()).rejects.toThrow('b cannot start');
    expect(ran).toEqual(['a up']);
    await app.close();
    expect(ran.slice(1)).toEqual(['c down', 'a down']);
  });

  it('a part that cannot join refuses the listen (onReady)', async () => {
    const { app, lifecycle } = setUp();
    await app.register(lifecycle.part('cluster', { ready: () => Promise.reject(new Error('node id held')) }));
    await app.register(lifecycle.last());
    await expect(app.listen({ host: '127.0.0.1', port: 0 })).rejects.toThrow('node id held');
    expect(app.server.listening).toBe(false);
  });
});

describe('ports', () => {
  it('a port read before its part is made, or provided twice, fails loudly; peek reads nothing yet', () => {
    const host = port<{ id: string }>('conversation host');
    expect(() => host.get()).toThrow('the conversation host port was read before the conversation host was made');
    expect(host.peek()).toBeUndefined();
    const made = { id: 'h' };
    expect(host.provide(made)).toBe(made);
    expect(host.get()).toBe(made);
    expect(host.peek()).toBe(made);
    expect(() => host.provide({ id: 'other' })).toThrow('provided twice');
  });
});
