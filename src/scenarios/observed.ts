// What happened in a conversation (or in one turn of it), as the runner saw it: what the expectations are checked on.
import type { ToolCall } from '../conversations/tool-calls.ts';

export type { ToolCall };

export interface ConfirmationSeen {
  name: string;
  args: unknown;
  /** What the runner answered, if it did. */
  answer?: 'approve' | 'decline';
}

/** A source a reply cites (a knowledge answer's `sources`). */
export interface CitedSource {
  n: number;
  title: string;
  url?: string;
}

export interface Observed {
  tools: ToolCall[];
  replies: string[];
  /** The sources the replies cite, in order. */
  sources: CitedSource[];
  proactive: string[];
  confirmations: ConfirmationSeen[];
  handoff: boolean;
}

/** A failed expectation: what was expected, what happened instead. */
export interface Difference {
  expected: string;
  happened: string;
}
