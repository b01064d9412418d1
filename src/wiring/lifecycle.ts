// Every part of Parley is a fastify plugin that registers its routes and its own lifecycle hooks (issue 31, part 5),
// so the order of `app.register` is the order of start and its reverse the order of stop. Fastify 5 (checked on
// 5.12 with encapsulated plugins, i.e. without fastify-plugin, which would move a part's hooks onto the root):
//   onReady, preClose: one after another, each awaited, in registration order (the root instance's own hooks first);
//     onReady is under fastify's `pluginTimeout` (app.ts turns it off: the cluster's join may wait a whole lease);
//   onClose: each awaited, in reverse registration order (the part registered last closes first; within a part, its
//     last hook first);
//   onListen: called in registration order, but sibling plugins' hooks are not awaited one by one (fastify starts
//     each child's runner as soon as the root's hooks are done), `listen()` resolves without waiting for them, and an
//     error is only logged. So a part's `listen` is queued here on one chain: the parts start one after another,
//     `started()` resolves once the last has, and rejects with the first that failed (the parts after it do not start).
// A stop step that fails is logged and the next one runs, as before.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Logger } from '../logger.ts';

export type Phase = 'ready' | 'listen' | 'preClose' | 'close';

/** One step of one part, as the recorder sees it (tests assert the order). */
export interface LifecycleStep {
  phase: Phase;
  part: string;
}

export interface PartHooks {
  /** `onReady`: before the server listens; fastify listens only once it resolved, and its failure fails the start. */
  ready?: () => Promise<void> | void;
  /** `onListen`: once the server listens. */
  listen?: () => Promise<void> | void;
  /** `preClose`: the server refuses new requests but has not closed its sockets yet. */
  preClose?: () => Promise<void> | void;
  /** `onClose`: the server is closed; in reverse registration order. */
  close?: () => Promise<void> | void;
}

export interface Lifecycle {
  /** A part: its routes (registered in its own scope) and its hooks. */
  part(name: string, hooks: PartHooks, routes?: (scope: FastifyInstance) => PromiseLike<unknown>): FastifyPluginAsync;
  /** Registered after every part: its onListen says that all of theirs have run. */
  last(): FastifyPluginAsync;
  /** Resolves when every part's `listen` has run; rejects with the first that failed (the later ones are not run). */
  started(): Promise<void>;
}

export function createLifecycle(o: { logger: Logger; record?: (step: LifecycleStep) => void }): Lifecycle {
  const log = o.logger.child({ component: 'lifecycle' });
  let failure: unknown;
  let done: (() => void) | undefined;
  const allStarted = new Promise<void>((resolve) => (done = resolve));
  // The parts' starts, one after another in the order fastify calls their onListen (registration order).
  let starting = Promise.resolve();
  const startStep = (name: string, listen: () => Promise<void> | void) => async () => {
    // After a part failed, the ones after it (which may rely on it) are not started; their stop steps still run.
    if (failure !== undefined) return;
    note('listen', name);
    try {
      await listen();
    } catch (err) {
      log.error({ err, part: name }, 'start step failed');
      failure ??= err ?? new Error(`${name} failed to start`);
    }
  };
  const note = (phase: Phase, part: string) => {
    o.record?.({ phase, part });
    log.debug({ part, phase }, 'lifecycle step');
  };
  return {
    part: (name, hooks, routes) => async (scope) => {
      const { ready, listen, preClose, close } = hooks;
      if (ready)
        scope.addHook('onReady', async () => {
          note('ready', name);
          await ready();
        });
      if (listen)
        scope.addHook('onListen', async () => {
          starting = starting.then(startStep(name, listen));
        });
      if (preClose)
        scope.addHook('preClose', async () => {
          note('preClose', name);
          await preClose();
        });
      if (close)
        scope.addHook('onClose', async () => {
          note('close', name);
          try {
            await close();
          } catch (err) {
            log.warn({ err, part: name }, 'shutdown step failed');
          }
        });
      if (routes) await routes(scope);
    },
    last: () => async (scope) => {
      scope.addHook('onListen', async () => {
        starting = starting.then(() => done?.());
      });
    },
    started: async () => {
      await allStarted;
      if (failure !== undefined) throw failure;
    },
  };
}
