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
}

export function createReplyStream(id: string, send: (delta: ReplyDelta) => void): ReplyStream {
  let shown = false;
  let held = '';
  return {
    append(piece) {
      const text = shown ? held + piece : (held + piece).trimStart();
      const kept = text.trimEnd();
      held = text.slice(kept.length);
      if (!kept) return;
      shown = true;
      send({ id, text: kept });
    },
    takeBack() {
      held = '';
      if (!shown) return;
      shown = false;
      send({ id, text: '', reset: true });
    },
  };
}
