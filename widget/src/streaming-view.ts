// The row of the reply being written (built by `streamingNode`, an assistant
// row without its time). It is `aria-hidden`: screen readers hear the reply
// once, when its final message takes this row's place in the log (a live
// region), not at every delta.
import { streamingNode } from './nodes.ts';
import type { StreamingReply } from './streaming.ts';

export interface StreamingBubble {
  render(reply: StreamingReply | undefined): void;
  /** The node the final message with this id should take the place of, if it is being shown. */
  placeOf(id: string): HTMLElement | undefined;
}

/** Shows the reply being written in `log`, just before `before` (the typing indicator, always last). */
export function createStreamingBubble(log: HTMLElement, before: HTMLElement): StreamingBubble {
  let shown: { id: string; row: HTMLElement; text: HTMLElement } | undefined;
  return {
    render(reply) {
      if (shown && shown.id !== reply?.id) {
        shown.row.remove();
        shown = undefined;
      }
      if (!reply) return;
      if (!shown) {
        shown = { id: reply.id, ...streamingNode() };
        log.insertBefore(shown.row, before);
      }
      if (shown.text.textContent !== reply.text) shown.text.textContent = reply.text;
    },
    placeOf: (id) => (shown?.id === id ? shown.row : undefined),
  };
}
