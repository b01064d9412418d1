// The live feed: one WebSocket to /api/v1/inbox/live (the session cookie goes with it), reconnected with a growing
// pause; after a reconnect the page reads everything again (what was said meanwhile is not replayed). Presence: the
// page says "away" while hidden.
import type { InboxEventFrame, InboxLiveFrame, InboxPresenceFrame } from './api.ts';

export interface LiveHandlers {
  event(e: InboxEventFrame): void;
  presence(p: InboxPresenceFrame): void;
  /** Connected (again): read everything. */
  connected(): void;
  status(s: 'live' | 'reconnecting'): void;
}

export function connectLive(h: LiveHandlers): { close(): void } {
  let socket: WebSocket | undefined;
  let pause = 500;
  let closed = false;
  const presence = () => JSON.stringify({ type: 'presence', presence: document.visibilityState === 'hidden' ? 'away' : 'online' });
  const onVisibility = () => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(presence());
  };
  document.addEventListener('visibilitychange', onVisibility);
  const open = () => {
    const s = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/inbox/live`);
    socket = s;
    s.onopen = () => {
      pause = 500;
      s.send(presence());
      h.status('live');
      h.connected();
    };
    s.onmessage = (m) => {
      const f = JSON.parse(String(m.data)) as InboxLiveFrame;
      if (f.type === 'event') h.event(f);
      else if (f.type === 'presence') h.presence(f);
    };
    s.onclose = () => {
      if (closed) return;
      h.status('reconnecting');
      setTimeout(open, pause);
      pause = Math.min(pause * 2, 10_000);
    };
  };
  open();
  return {
    close() {
      closed = true;
      document.removeEventListener('visibilitychange', onVisibility);
      socket?.close();
    },
  };
}
