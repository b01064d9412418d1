// The inbox's live feed: one WebSocket per open inbox page (`/api/v1/inbox/live`, the agent's session cookie, same
// origin only). What happens to a conversation (a handoff, a customer's message, a claim…) is published on the
// cluster bus by the node where it happened and pushed by every node to the pages open on it: every inbox hears it
// within a moment, on any node (LMDB: the bus is this process). Nothing on the feed is needed for correctness: a page
// reads the lists again on each event and after a reconnect.
//
// Presence: each node keeps the agents whose pages are open on it (online, or away when the page is hidden) and
// announces them on the bus when they change and every PRESENCE_EVERY_MS; a node's list not heard again within
// PRESENCE_TTL_MS is forgotten (the node is gone).
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { InboxAgent } from '../store/model.ts';
import type { ClusterBus } from '../store/repos.ts';
import { InboxClientFrame, type InboxEventFrame, type InboxEventKind, type InboxLiveFrame, type Presence } from './wire.ts';

const EVENTS_TOPIC = 'agent-inbox';
const PRESENCE_TOPIC = 'agent-presence';
export const PRESENCE_EVERY_MS = 15_000;
export const PRESENCE_TTL_MS = 45_000;

type PresenceRow = InboxAgent & { presence: Presence };

interface Page {
  socket: WebSocket;
  agent: InboxAgent;
  presence: Presence;
}

export interface InboxLive {
  /** Publishes an event to every node's open pages. */
  announce(kind: InboxEventKind, conversationId: string, at: number, agent?: InboxAgent): void;
  /** A page's socket, authenticated: kept until it closes. */
  attach(socket: WebSocket, agent: InboxAgent): void;
  /** Agents with an inbox open anywhere: online wins over away. */
  presence(): PresenceRow[];
  start(): void;
  stop(): void;
  pages(): number;
}

export function createInboxLive(o: { bus: ClusterBus; clock: Clock; logger: Logger }): InboxLive {
  const { bus, clock } = o;
  const nodeKey = randomUUID();
  const pages = new Set<Page>();
  const peers = new Map<string, { rows: PresenceRow[]; heardAt: number }>();
  const unsubscribe: (() => void)[] = [];
  let timer: ReturnType<Clock['setTimeout']> | undefined;

  const send = (socket: WebSocket, frame: InboxLiveFrame) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  };
  const local = (): PresenceRow[] => {
    const rows = new Map<string, PresenceRow>();
    for (const p of pages) {
      const known = rows.get(p.agent.agentId);
      if (!known || p.presence === 'online') rows.set(p.agent.agentId, { agentId: p.agent.agentId, name: p.agent.name, presence: p.presence });
    }
    return [...rows.values()];
  };
  const presence = (): PresenceRow[] => {
    const now = clock.now();
    const merged = new Map<string, PresenceRow>();
    for (const [key, peer] of peers) {
      if (now - peer.heardAt > PRESENCE_TTL_MS) peers.delete(key);
    }
    for (const row of [...local(), ...[...peers.values()].flatMap((p) => p.rows)]) {
      const known = merged.get(row.agentId);
      if (!known || row.presence === 'online') merged.set(row.agentId, row);
    }
    return [...merged.values()].sort((a, b) => a.name.localeCompare(b.name));
  };
  const pushPresence = () => {
    const frame: InboxLiveFrame = { type: 'presence', agents: presence() };
    for (const p of pages) send(p.socket, frame);
  };
  /** Whether the last announcement named anyone: a node with no page open says so once, then stays quiet. */
  let announcedSomeone = false;
  const announcePresence = () => {
    pushPresence();
    const rows = local();
    if (rows.length === 0 && !announcedSomeone) return;
    announcedSomeone = rows.length > 0;
    void bus.publish(PRESENCE_TOPIC, JSON.stringify({ node: nodeKey, rows })).catch(() => undefined);
  };
  const tick = () => {
    announcePresence();
    timer = clock.setTimeout(tick, PRESENCE_EVERY_MS);
  };

  return {
    announce(kind, conversationId, at, agent) {
      const frame: InboxEventFrame = agent ? { type: 'event', kind, conversationId, at, agent } : { type: 'event', kind, conversationId, at };
      void bus.publish(EVENTS_TOPIC, JSON.stringify(frame)).catch((err) => o.logger.warn({ err, kind }, 'inbox event could not be published'));
    },
    attach(socket, agent) {
      const page: Page = { socket, agent, presence: 'online' };
      pages.add(page);
      socket.on('message', (data) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(String(data));
        } catch {
          parsed = undefined;
        }
        const frame = InboxClientFrame.safeParse(parsed);
        if (!frame.success)
          return socket.send(JSON.stringify({ type: 'error', code: 'bad_frame', message: 'Send {"type":"presence","presence":"online"|"away"}' }));
        page.presence = frame.data.presence;
        announcePresence();
      });
      socket.on('close', () => {
        pages.delete(page);
        announcePresence();
      });
      announcePresence();
    },
    presence,
    start() {
      unsubscribe.push(
        bus.subscribe(EVENTS_TOPIC, (payload) => {
          for (const p of pages) if (p.socket.readyState === p.socket.OPEN) p.socket.send(payload);
        }),
        bus.subscribe(PRESENCE_TOPIC, (payload) => {
          const m = JSON.parse(payload) as { node: string; rows: PresenceRow[] };
          if (m.node === nodeKey) return;
          peers.set(m.node, { rows: m.rows, heardAt: clock.now() });
          pushPresence();
        }),
      );
      timer = clock.setTimeout(tick, PRESENCE_EVERY_MS);
    },
    stop() {
      for (const u of unsubscribe.splice(0)) u();
      if (timer) clock.clearTimeout(timer);
      for (const p of pages) p.socket.close(1001, 'server stopping');
      pages.clear();
    },
    pages: () => pages.size,
  };
}
