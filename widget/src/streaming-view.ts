// The bubble of the reply being written. It is `aria-hidden`: screen readers
// hear the reply once, when its final message is added to the log (a live
// region), not at every delta.
import type { StreamingReply } from './streaming.ts';

export interface StreamingBubble {
  render(reply: StreamingReply | undefined): void;
  /** The node the final message with this id should take the place of, if it is being shown. */
  placeOf(id: string): HTMLElement | undefined;
}

export function createStreamingBubble(log: HTMLElement, before: HTMLElement): StreamingBubble {
  let shown: { id: string; node: HTMLElement; text: HTMLElement } | undefined;
  return {
    render(reply) {
      if (shown && shown.id !== reply?.id) {
        shown.node.remove();
        shown = undefined;
      }
      if (!reply) return;
      if (!shown) {
        const node = document.createElement('div');
        node.className = 'msg';
        node.setAttribute('data-role', 'assistant');
        node.setAttribute('data-testid', 'streaming');
        node.setAttribute('aria-hidden', 'true');
        const text = document.createElement('span');
        text.className = 'text';
        node.append(text);
        log.insertBefore(node, before);
        shown = { id: reply.id, node, text };
      }
      if (shown.text.textContent !== reply.text) shown.text.textContent = reply.text;
    },
    placeOf: (id) => (shown?.id === id ? shown.node : undefined),
  };
}
