// Request and response between the nodes of a cluster over the store's bus. A request names its target by node id
// (read at each use: a node rejoins under a new id after losing its lease) and is heard by every node, the sender too;
// only the target answers. A response is matched by the request's random id, so a caller that rejoined meanwhile
// still gets it.
//
// A call never rejects and never hangs: it fails at once when the target is not alive or this node does not hear the
// bus, with `node_gone` as soon as the membership view shows the target dead mid-call, and with `timeout` when no
// answer came within its timeout (a node that died without the view showing it yet, a lost message).
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { ClusterBus } from '../store/repos.ts';
import { RpcMessage, TOPICS, type RpcError, type RpcMethod } from './wire.ts';

export type RpcResult<T> = { ok: true; body: T } | { ok: false; error: RpcError };

type Methods = Record<string, RpcMethod>;
type RequestOf<M extends RpcMethod> = z.input<M['request']>;
type ResponseOf<M extends RpcMethod> = z.output<M['response']>;

export interface NodeRpc<M extends Methods> {
  /** Answers `method` for the other nodes; the body is parsed with the method's request schema first. */
  handle<K extends keyof M & string>(method: K, fn: (body: z.output<M[K]['request']>, from: string) => Promise<z.input<M[K]['response']>>): void;
  call<K extends keyof M & string>(nodeId: string, method: K, body: RequestOf<M[K]>, timeoutMs: number): Promise<RpcResult<ResponseOf<M[K]>>>;
  /** Subscribes to the bus. */
  start(): void;
  /** Unsubscribes; calls still waiting fail with `unavailable`. */
  stop(): void;
  /** Calls waiting for an answer (diagnostics, tests). */
  pending(): number;
}

export interface NodeRpcOptions<M extends Methods> {
  bus: ClusterBus;
  methods: M;
  /** This node's id now. */
  nodeId: () => string;
  /** Whether another node may be sent a request (the membership view). */
  alive: (nodeId: string) => boolean;
  /** Real time (a test clock's offset must not end calls). */
  clock: Clock;
  logger: Logger;
  /** How often calls in flight look at their target's liveness. */
  checkEveryMs?: number;
}

interface Pending {
  to: string;
  method: RpcMethod;
  timer: TimerHandle;
  settle: (r: RpcResult<unknown>) => void;
}

const DEFAULT_CHECK_EVERY_MS = 100;

export function createNodeRpc<M extends Methods>(o: NodeRpcOptions<M>): NodeRpc<M> {
  const log = o.logger.child({ component: 'node-rpc' });
  const checkEveryMs = o.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS;
  const handlers = new Map<string, (body: unknown, from: string) => Promise<unknown>>();
  const pending = new Map<string, Pending>();
  let unsubscribe: (() => void) | undefined;
  let sweep: TimerHandle | undefined;

  const fail = (code: RpcError['code'], message: string) => ({ ok: false as const, error: { code, message } });

  const settle = (id: string, r: RpcResult<unknown>) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    o.clock.clearTimeout(p.timer);
    p.settle(r);
  };

  const armSweep = () => {
    if (sweep || pending.size === 0) return;
    sweep = o.clock.setTimeout(() => {
      sweep = undefined;
      for (const [id, p] of pending) if (!o.alive(p.to)) settle(id, fail('node_gone', `node ${p.to} is gone`));
      armSweep();
    }, checkEveryMs);
  };

  const publish = (message: RpcMessage) => o.bus.publish(TOPICS.rpc, JSON.stringify(message));

  const answer = async (req: Extract<RpcMessage, { kind: 'request' }>) => {
    const reply = (outcome: RpcResult<unknown>) => publish({ kind: 'response', id: req.id, to: req.from, outcome });
    const fn = handlers.get(req.method);
    const method = Object.hasOwn(o.methods, req.method) ? o.methods[req.method] : undefined;
    let result: RpcResult<unknown>;
    if (!fn || !method) {
      result = fail('refused', `node ${o.nodeId()} has no handler for ${req.method}`);
    } else {
      const body = method.request.safeParse(req.body);
      if (!body.success) {
        result = fail('refused', `${req.method}: the request was refused: ${body.error.message}`);
      } else {
        try {
          result = { ok: true, body: await fn(body.data, req.from) };
        } catch (err) {
          log.error({ err, method: req.method, from: req.from }, 'a cluster request handler failed');
          result = fail('failed', `${req.method} failed on node ${o.nodeId()}: ${(err as Error).message}`);
        }
      }
    }
    await reply(result).catch((err: unknown) =>
      log.warn({ err: { message: (err as Error).message }, method: req.method, to: req.from }, 'could not answer a node'),
    );
  };

  const onMessage = (payload: string) => {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return void log.warn('a cluster rpc message that is not JSON was ignored');
    }
    const parsed = RpcMessage.safeParse(json);
    if (!parsed.success) return void log.warn({ issues: parsed.error.issues.slice(0, 3) }, 'a cluster rpc message was refused by its schema');
    const m = parsed.data;
    if (m.kind === 'request') {
      if (m.to === o.nodeId()) void answer(m);
      return;
    }
    const p = pending.get(m.id);
    if (!p) return; // another node's call, or one that already timed out
    if (!m.outcome.ok) return settle(m.id, m.outcome);
    const body = p.method.response.safeParse(m.outcome.body);
    settle(m.id, body.success ? { ok: true, body: body.data } : fail('refused', `the response was refused: ${body.error.message}`));
  };

  return {
    handle(method, fn) {
      handlers.set(method, fn as (body: unknown, from: string) => Promise<unknown>);
    },

    call(to, method, body, timeoutMs) {
      type R = RpcResult<ResponseOf<M[typeof method]>>;
      if (!unsubscribe) return Promise.resolve(fail('unavailable', 'the cluster rpc is not started'));
      if (!o.alive(to)) return Promise.resolve(fail('node_gone', `node ${to} is not alive`));
      if (!o.bus.listening()) return Promise.resolve(fail('unavailable', 'this node does not hear the cluster bus now'));
      const id = randomUUID();
      const result = new Promise<R>((resolve) => {
        pending.set(id, {
          to,
          method: o.methods[method],
          settle: resolve as (r: RpcResult<unknown>) => void,
          timer: o.clock.setTimeout(() => settle(id, fail('timeout', `node ${to} did not answer ${method} within ${timeoutMs} ms`)), timeoutMs),
        });
      });
      armSweep();
      void publish({ kind: 'request', id, from: o.nodeId(), to, method, body }).catch((err: unknown) =>
        settle(id, fail('unavailable', `the request could not be sent: ${(err as Error).message}`)),
      );
      return result;
    },

    start() {
      unsubscribe ??= o.bus.subscribe(TOPICS.rpc, onMessage);
    },

    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      o.clock.clearTimeout(sweep);
      sweep = undefined;
      for (const id of [...pending.keys()]) settle(id, fail('unavailable', 'this node is stopping'));
    },

    pending: () => pending.size,
  };
}
