// The SDK catalogs of the other nodes. Each node announces its own local catalog on the bus (every function with the
// time it saw it registered, and whether it has an `onSend` handler) whenever it changes, when it starts, when its
// bus listener (re)connects, when it rejoins under a new id, and when another node asks (a node that just started, or
// heard nothing for a while). Only the announcements of live nodes count (peers.ts); among them a name resolves to
// the most recent registration, as it does among one node's connections. This node's own catalog is not kept here:
// the hub asks its local hub first, so a local registration always wins.
import { randomUUID } from 'node:crypto';
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { CatalogEntry } from '../services.ts';
import type { SdkHubRuntime } from './hub.ts';
import type { ClusterBus } from '../store/repos.ts';
import type { ClusterView } from '../cluster/membership.ts';
import { peerAlive } from '../cluster/peers.ts';
import { CatalogAnnouncement, CatalogAsk, TOPICS } from '../cluster/wire.ts';

export interface RemoteCatalogEntry extends CatalogEntry {
  nodeId: string;
  registeredAt: number;
}

export interface ClusterCatalog {
  /** Subscribes, announces this node's catalog and asks the others for theirs. */
  start(): void;
  /** Announces an empty catalog (the others drop this node's functions at once), then unsubscribes. */
  stop(): Promise<void>;
  /** The live nodes' functions, one per name (the most recent registration). */
  remote(): RemoteCatalogEntry[];
  /** The live node whose registration of `name` is the most recent. */
  nodeFor(name: string): string | undefined;
  /** The live node with the most recent SDK connection that has an `onSend` handler. */
  sendNode(): string | undefined;
  alive(nodeId: string): boolean;
  /** Another node's catalog changed as seen from here. */
  onChange(listener: () => void): () => void;
  /** Announces this node's catalog (coalesced: several changes in one pass of the event loop make one). */
  announce(): void;
}

export interface ClusterCatalogOptions {
  bus: ClusterBus;
  local: Pick<SdkHubRuntime, 'catalog' | 'connections' | 'onChange'>;
  nodeId: () => string;
  view: () => ClusterView;
  /** Wall time (ms): when a registration was seen, compared across nodes. */
  now: () => number;
  /** Monotonic time (ms): when a node was last heard. */
  mono?: () => number;
  /** Real time, for retrying a failed announcement. */
  clock: Clock;
  logger: Logger;
}

interface Remote {
  instance: string;
  version: number;
  heardAt: number;
  functions: Map<string, RemoteCatalogEntry>;
  sendProvider: number | null;
}

const RETRY_MS = 1000;

export function createClusterCatalog(o: ClusterCatalogOptions): ClusterCatalog {
  const log = o.logger.child({ component: 'cluster-catalog' });
  const mono = o.mono ?? (() => performance.now());
  const instance = randomUUID();
  const remotes = new Map<string, Remote>();
  const listeners = new Set<() => void>();
  /** When this node saw each of its registered connections register. */
  const stamps = new Map<string, number>();
  const unsubscribe: (() => void)[] = [];
  let version = 0;
  let scheduled = false;
  let stopped = false;
  let retry: TimerHandle | undefined;
  let failing = false;

  const alive = (nodeId: string) => {
    const r = remotes.get(nodeId);
    return peerAlive(o.view(), nodeId, r && mono() - r.heardAt);
  };

  const live = () => {
    const view = o.view();
    const now = mono();
    return [...remotes].filter(([nodeId, r]) => peerAlive(view, nodeId, now - r.heardAt));
  };

  const changed = () => {
    for (const l of listeners) {
      try {
        l();
      } catch (err) {
        log.error({ err }, 'catalog listener failed');
      }
    }
  };

  const restamp = () => {
    const registered = new Set<string>();
    for (const c of o.local.connections()) {
      if (!c.registered) continue;
      registered.add(c.connectionId);
      if (!stamps.has(c.connectionId)) stamps.set(c.connectionId, o.now());
    }
    for (const id of stamps.keys()) if (!registered.has(id)) stamps.delete(id);
  };

  const own = (withdraw: boolean): CatalogAnnouncement => {
    const base = { nodeId: o.nodeId(), instance, version: ++version };
    if (withdraw) return Object.assign(base, { functions: [], sendProvider: null });
    let sendProvider: number | null = null;
    for (const c of o.local.connections()) {
      const at = stamps.get(c.connectionId);
      if (c.sendProvider && at !== undefined && (sendProvider === null || at > sendProvider)) sendProvider = at;
    }
    const functions = o.local.catalog().map((e) => ({
      name: e.name,
      description: e.description,
      parameters: e.parameters,
      mode: e.mode,
      visitors: e.visitors,
      connectionId: e.connectionId,
      registeredAt: stamps.get(e.connectionId) ?? o.now(),
    }));
    return Object.assign(base, { functions, sendProvider });
  };

  const publishOwn = async () => {
    scheduled = false;
    if (stopped) return;
    try {
      await o.bus.publish(TOPICS.catalog, JSON.stringify(own(false)));
      if (failing) log.info('the SDK catalog is announced again');
      failing = false;
    } catch (err) {
      // Once per outage (the store reports the outage itself); retried every second meanwhile.
      log[failing ? 'debug' : 'warn']({ err: { message: (err as Error).message } }, 'could not announce the SDK catalog; retrying');
      failing = true;
      o.clock.clearTimeout(retry);
      retry = o.clock.setTimeout(schedule, RETRY_MS);
    }
  };

  function schedule() {
    if (scheduled || stopped) return;
    scheduled = true;
    queueMicrotask(() => void publishOwn());
  }

  const ask = () => {
    void o.bus
      .publish(TOPICS.catalogAsk, JSON.stringify({ nodeId: o.nodeId(), instance }))
      .catch((err: unknown) => log.warn({ err: { message: (err as Error).message } }, 'could not ask the other nodes for their SDK catalogs'));
  };

  const parse = <T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }, payload: string): T | undefined => {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {}
    const r = schema.safeParse(json);
    if (r.success) return r.data;
    log.warn('a cluster catalog message was refused');
    return undefined;
  };

  const onAnnouncement = (payload: string) => {
    const a = parse(CatalogAnnouncement, payload);
    if (!a || a.instance === instance) return;
    // The same process under another id: it lost its lease and joined again.
    for (const [nodeId, r] of remotes) if (r.instance === a.instance && nodeId !== a.nodeId) remotes.delete(nodeId);
    const prev = remotes.get(a.nodeId);
    if (prev?.instance === a.instance && prev.version >= a.version) return void (prev.heardAt = mono());
    const functions = new Map(
      a.functions.map((f): [string, RemoteCatalogEntry] => [
        f.name,
        {
          name: f.name,
          description: f.description,
          parameters: f.parameters,
          mode: f.mode,
          visitors: f.visitors,
          connectionId: `${a.nodeId}/${f.connectionId}`,
          nodeId: a.nodeId,
          registeredAt: f.registeredAt,
        },
      ]),
    );
    remotes.set(a.nodeId, { instance: a.instance, version: a.version, heardAt: mono(), functions, sendProvider: a.sendProvider });
    forgetGone();
    changed();
  };

  /** Nodes no longer in the view and not heard for a lease: rows of dead nodes are pruned after a while. */
  const forgetGone = () => {
    const view = o.view();
    for (const [nodeId, r] of remotes) {
      if (!view.nodes.some((n) => n.nodeId === nodeId) && mono() - r.heardAt > view.leaseSeconds * 1000) remotes.delete(nodeId);
    }
  };

  const onAsk = (payload: string) => {
    const a = parse(CatalogAsk, payload);
    if (a && a.instance !== instance) schedule();
  };

  /** Newest registration wins; equal times go to the smaller node id, so that every node picks the same one. */
  const newer = (a: { at: number; nodeId: string }, b: { at: number; nodeId: string } | undefined) =>
    !b || a.at > b.at || (a.at === b.at && a.nodeId < b.nodeId);

  return {
    start() {
      if (unsubscribe.length) return;
      stopped = false;
      unsubscribe.push(
        o.bus.subscribe(TOPICS.catalog, onAnnouncement),
        o.bus.subscribe(TOPICS.catalogAsk, onAsk),
        o.bus.onResync(() => {
          schedule();
          ask();
        }),
        o.local.onChange(() => {
          restamp();
          schedule();
        }),
      );
      restamp();
      schedule();
      ask();
    },

    async stop() {
      const announced = unsubscribe.length > 0;
      stopped = true;
      if (!announced) return;
      o.clock.clearTimeout(retry);
      for (const u of unsubscribe.splice(0)) u();
      await o.bus.publish(TOPICS.catalog, JSON.stringify(own(true))).catch(() => undefined);
      remotes.clear();
    },

    remote() {
      const winners = new Map<string, RemoteCatalogEntry>();
      for (const [, r] of live()) {
        for (const f of r.functions.values()) {
          const best = winners.get(f.name);
          if (newer({ at: f.registeredAt, nodeId: f.nodeId }, best && { at: best.registeredAt, nodeId: best.nodeId })) winners.set(f.name, f);
        }
      }
      return [...winners.values()];
    },

    nodeFor(name) {
      let best: { at: number; nodeId: string } | undefined;
      for (const [nodeId, r] of live()) {
        const f = r.functions.get(name);
        if (f && newer({ at: f.registeredAt, nodeId }, best)) best = { at: f.registeredAt, nodeId };
      }
      return best?.nodeId;
    },

    sendNode() {
      let best: { at: number; nodeId: string } | undefined;
      for (const [nodeId, r] of live()) if (r.sendProvider !== null && newer({ at: r.sendProvider, nodeId }, best)) best = { at: r.sendProvider, nodeId };
      return best?.nodeId;
    },

    alive,

    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },

    announce: schedule,
  };
}
