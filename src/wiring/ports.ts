// The parts that need each other both ways, in one object made before any of them (issue 31, part 5): the
// supervisor passivates through the conversation host and the host reports activations to the supervisor; the
// WhatsApp channel hands messages to the host and the host sends through the channel; cluster membership reports the
// host's load; the WhatsApp channel records a rating with the outcome tracker, which asks the channel for one. Each
// is made once, in `parts.ts`, and provided here; a port read before its part is made fails loudly (a wiring bug),
// and one provided twice too.
import type { ConversationHost } from '../conversations/host.ts';
import type { OutcomeTracker } from '../outcomes/tracker.ts';

export interface Port<T> {
  get(): T;
  /** For a reader that runs once before the part is made too (membership reads its load when it is made). */
  peek(): T | undefined;
  provide(value: T): T;
}

export function port<T>(name: string): Port<T> {
  let value: { v: T } | undefined;
  return {
    get() {
      if (!value) throw new Error(`the ${name} port was read before the ${name} was made`);
      return value.v;
    },
    peek: () => value?.v,
    provide(v) {
      if (value) throw new Error(`the ${name} port was provided twice`);
      value = { v };
      return v;
    },
  };
}

export interface Ports {
  host: Port<ConversationHost>;
  outcomes: Port<OutcomeTracker>;
}

export function createPorts(): Ports {
  return { host: port('conversation host'), outcomes: port('outcome tracker') };
}
