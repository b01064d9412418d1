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
// The first words of a reply (and of an attempt after a reset) go out at
// once: they are what the customer waits for. Every later piece waits for the
// end of the current turn of the event loop (`defer`, setImmediate) or for the
// reply to be final (`flush`), and the pieces gathered by then go out as one
// delta. A busy process reads many chunks at once — the model's for this reply
// and other conversations' — and each delta costs a frame and a socket write
// per open widget: deferred, those writes no longer hold up the first words of
// the other replies read in the same turn, and pieces no one could have seen
// apart cost one write instead of several.

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
  /** The end of this turn of the event loop will send what is waiting. */
  let deferred = false;

  const sendWaiting = () => {
    if (!waiting) return;
    shown = true;
    send({ id, text: waiting });
    waiting = '';
  };
  const endTurn = () => {
    deferred = false;
    sendWaiting();
  };
  return {
    append(piece) {
      const text = started ? held + piece : (held + piece).trimStart();
      const kept = text.trimEnd();
      held = text.slice(kept.length);
      if (!kept) return;
      started = true;
      waiting += kept;
      if (!shown) return sendWaiting();
      if (deferred) return;
      deferred = true;
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
    flush: sendWaiting,
  };
}
