// The live text of a reply while the LLM writes it: `delta` frames for the
// widget, never stored. What has been shown is always the start of what the
// stored reply will say:
// - leading whitespace is not sent, and trailing whitespace waits until more
//   text follows (the stored reply is trimmed), so the deltas joined are
//   exactly the final text;
// - text that can no longer become the reply — the attempt failed and is
//   retried or handed to the fallback, or the step turned out to call tools —
//   is taken back at once with one `reset` delta (empty text): the widget
//   empties the bubble and shows the typing indicator again, and the next
//   attempt writes from the start. The customer never sees two beginnings.
//
// Pieces that arrive in the same turn of the event loop (a busy process reads
// several of the model's chunks at once) go out as one delta: the first at
// once, so the first words are never held back, the rest together when the
// turn ends (`defer`, setImmediate) or when the reply is final (`flush`).
// Every delta costs a frame and a socket write per open widget; a delta no
// one could have seen apart from its neighbour is not worth one.

export interface ReplyDelta {
  /** The id the final reply will have. */
  id: string;
  /** Text to append (after clearing, when `reset`). */
  text: string;
  /** Discard what was shown for this id before appending `text`. */
  reset?: boolean;
}

export interface ReplyStream {
  append(piece: string): void;
  /** Whatever was shown is void: send a reset if anything was. */
  takeBack(): void;
  /** The reply is final: send the text still waiting for the end of this turn of the event loop. */
  flush(): void;
}

/** Runs `fn` once this turn of the event loop is over (after the I/O it is handling). */
export type Defer = (fn: () => void) => void;

const endOfTurn: Defer = (fn) => void setImmediate(fn);

export function createReplyStream(id: string, send: (delta: ReplyDelta) => void, defer: Defer = endOfTurn): ReplyStream {
  /** Text was sent since the last reset. */
  let shown = false;
  /** Text was sent or is waiting to be (leading whitespace is no longer trimmed). */
  let started = false;
  let held = '';
  let waiting = '';
  /** A delta went out in this turn of the event loop: more text waits for its end. */
  let turnOpen = false;

  const sendNow = (text: string) => {
    shown = true;
    send({ id, text });
  };
  const endTurn = () => {
    if (!waiting) {
      turnOpen = false;
      return;
    }
    sendNow(waiting);
    waiting = '';
    // Still inside a burst: the next turn's pieces are gathered too.
    defer(endTurn);
  };
  return {
    append(piece) {
      const text = started ? held + piece : (held + piece).trimStart();
      const kept = text.trimEnd();
      held = text.slice(kept.length);
      if (!kept) return;
      started = true;
      if (turnOpen) {
        waiting += kept;
        return;
      }
      turnOpen = true;
      sendNow(kept);
      defer(endTurn);
    },
    takeBack() {
      held = '';
      waiting = '';
      started = false;
      if (!shown) return;
      shown = false;
      send({ id, text: '', reset: true });
    },
    flush() {
      if (!waiting) return;
      sendNow(waiting);
      waiting = '';
    },
  };
}
