// The SDK hub the features use when several nodes share one PostgreSQL (on LMDB the cluster is this one node and
// every call stays local): this node's SDK hub, plus the functions and `onSend` handlers of SDK connections held by
// the other nodes (cluster-catalog.ts), reached through node-rpc.ts.
//
// A function registered on this node is called here. Otherwise the call goes to the live node with the most recent
// registration of it, which calls its own hub with the same invocation id and timeout (a retry with the same id
// joins the call in flight there, as on one node) and answers with the outcome. The caller's own timer covers a node
// that dies mid-call: `timeout` when it runs out, or `disconnected` as soon as the membership view shows the node
// dead. Connection counts stay this node's (the spec's `/ready` checks are per node).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { InvokeOutcome, SdkHub } from '../services.ts';
import type { SdkHubRuntime } from './hub.ts';
import type { ClusterBus } from '../store/repos.ts';
import type { ClusterMembership } from '../cluster/membership.ts';
import { createClusterCatalog } from './cluster-catalog.ts';
import { createNodeRpc, type RpcResult } from '../cluster/node-rpc.ts';
import { createSdkBroadcastRelay } from './broadcast.ts';
import { SDK_METHODS, type RpcError } from '../cluster/wire.ts';

export interface ClusterHub extends SdkHub {
  /** This node's hub's (ingest frames come from this node's connections). */
  setIngestHandler: SdkHubRuntime['setIngestHandler'];
  /** Joins the bus: announces this node's catalog and asks for the others'. After the node joined the cluster. */
  start(): void;
  /** Withdraws this node's catalog; calls still waiting on other nodes fail. Before the node leaves. */
  stop(): Promise<void>;
}

export interface ClusterHubOptions {
  local: SdkHubRuntime;
  bus: ClusterBus;
  /** This node's membership (made before the hub: its id, the view of the nodes, rejoins). */
  membership: Pick<ClusterMembership, 'nodeId' | 'view' | 'onJoined'>;
  /** Real time: timers of calls to other nodes. */
  clock: Clock;
  logger: Logger;
  invokeTimeoutMs: number;
  sendTimeoutMs?: number;
}

const DEFAULT_SEND_TIMEOUT_MS = 15_000;

export function createClusterHub(o: ClusterHubOptions): ClusterHub {
  const { local } = o;
  const sendTimeoutMs = o.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const nodeId = () => o.membership.nodeId();
  const catalog = createClusterCatalog({
    bus: o.bus,
    local,
    nodeId,
    view: () => o.membership.view(),
    now: () => Date.now(),
    clock: o.clock,
    logger: o.logger,
  });
  const rpc = createNodeRpc({ bus: o.bus, methods: SDK_METHODS, nodeId, alive: catalog.alive, clock: o.clock, logger: o.logger });
  const relay = createSdkBroadcastRelay({ bus: o.bus, local, logger: o.logger });
  const invokes = new Map<string, Promise<InvokeOutcome>>();
  const sends = new Map<string, ReturnType<SdkHub['send']>>();
  let stopJoined: (() => void) | undefined;

  rpc.handle('invoke', (b) => local.invoke(b.name, b.args, b.context, { invocationId: b.invocationId, timeoutMs: b.timeoutMs }));
  rpc.handle('send', (b) => local.send(b.message, b.timeoutMs));

  const isLocal = (name: string) => local.catalog().some((e) => e.name === name);

  const unreachable = (error: RpcError, name: string): InvokeOutcome =>
    error.code === 'timeout'
      ? { ok: false, error: { code: 'timeout', message: `The SDK function "${name}" did not answer in time` } }
      : { ok: false, error: { code: 'disconnected', message: `The node holding the SDK connection is gone or unreachable (${error.message})` } };

  /** One call per key while it is in flight: a retry with the same key joins it. */
  const joined = <T>(inFlight: Map<string, Promise<T>>, key: string, start: () => Promise<T>): Promise<T> => {
    const running = inFlight.get(key);
    if (running) return running;
    const p = start();
    inFlight.set(key, p);
    void p.finally(() => inFlight.delete(key));
    return p;
  };

  return {
    catalog() {
      const own = local.catalog();
      const names = new Set(own.map((e) => e.name));
      return [...own, ...catalog.remote().filter((e) => !names.has(e.name))];
    },
    connectionCount: () => local.connectionCount(),
    registeredCount: () => local.registeredCount(),

    invoke(name, args, context, options = {}) {
      if (isLocal(name)) return local.invoke(name, args, context, options);
      const target = catalog.nodeFor(name);
      if (!target) return Promise.resolve({ ok: false, error: { code: 'unknown_function', message: `No SDK function named "${name}" is registered` } });
      const invocationId = options.invocationId ?? randomUUID();
      const timeoutMs = options.timeoutMs ?? o.invokeTimeoutMs;
      return joined(invokes, invocationId, async () => {
        const r = await rpc.call(target, 'invoke', { name, args: args ?? {}, context, invocationId, timeoutMs }, timeoutMs);
        if (!r.ok) return unreachable(r.error, name);
        const outcome: InvokeOutcome = r.body.ok ? { ok: true, data: r.body.data ?? null } : { ok: false, error: r.body.error };
        if (typeof r.body.receipt === 'string') outcome.receipt = r.body.receipt;
        return outcome;
      });
    },

    // A summary is asked of this node's backends only (a remote function's confirmation uses its templates).
    summarize: (name, args, locale, timeoutMs) =>
      isLocal(name) && local.summarize ? local.summarize(name, args, locale, timeoutMs) : Promise.resolve(undefined),

    canSend: () => local.canSend() || catalog.sendNode() !== undefined,

    send(message, timeoutMs = sendTimeoutMs) {
      if (local.canSend()) return local.send(message, timeoutMs);
      const target = catalog.sendNode();
      if (!target) return Promise.resolve({ ok: false, error: 'No SDK connection handles onSend' });
      return joined(sends, message.id, async () => {
        const r: RpcResult<{ ok: boolean; messageId?: string; error?: string }> = await rpc.call(target, 'send', { message, timeoutMs }, timeoutMs);
        return r.ok ? r.body : { ok: false, error: r.error.code === 'timeout' ? 'timeout' : 'disconnected' };
      });
    },

    broadcast: relay.broadcast,
    onChange(listener) {
      const offLocal = local.onChange(listener);
      const offRemote = catalog.onChange(listener);
      return () => {
        offLocal();
        offRemote();
      };
    },

    setIngestHandler: (handler) => local.setIngestHandler(handler),

    start() {
      rpc.start();
      relay.start();
      catalog.start();
      stopJoined ??= o.membership.onJoined(() => catalog.announce());
    },

    async stop() {
      stopJoined?.();
      stopJoined = undefined;
      relay.stop();
      rpc.stop();
      await catalog.stop();
    },
  };
}
