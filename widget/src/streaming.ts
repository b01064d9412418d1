// The reply being written (pure, no DOM): `delta` frames grow its text; its
// final `message` ends it. `ready` drops it (the server catches a new
// connection up with the text so far, right after `ready`).
import type { WidgetDeltaFrame } from '../../sdk/src/widget-protocol.ts';

export interface StreamingReply {
  id: string;
  text: string;
}

/** The reply being written after a `delta` frame. A delta for a reply already shown whole is ignored. */
export function applyDelta(current: StreamingReply | undefined, f: WidgetDeltaFrame, shownWhole: (id: string) => boolean): StreamingReply | undefined {
  if (shownWhole(f.id)) return current;
  const before = f.reset || current?.id !== f.id ? '' : current.text;
  const text = before + f.text;
  return text ? { id: f.id, text } : undefined;
}

/** The final `message` with this id has arrived: it replaces the reply being written. */
export const settleStreaming = (current: StreamingReply | undefined, id: string) => (current?.id === id ? undefined : current);
