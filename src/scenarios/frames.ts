// What the runner keeps of the frames a customer receives, and what happened in a window of them (pure). A message
// frame's cited `sources` (knowledge answers: `[{ n, title, url? }]`) are kept beside the frame the widget protocol
// parses, so `expect: { reply: { sources } }` can check them.
import { z } from 'zod';
import { WidgetServerFrame, type WidgetServerFrame as ServerFrame } from '../../sdk/src/widget-protocol.ts';
import type { CitedSource, Observed, ToolCall } from './observed.ts';

const CitedSources = z.array(z.object({ n: z.number(), title: z.string(), url: z.string().optional() }));

/** A server frame as the runner keeps it: a message with the sources it cites (none: an empty list). */
export type SessionFrame = ServerFrame & { sources?: CitedSource[] };

/** Parses one raw frame; undefined when it is not a frame of the widget protocol. */
export function parseFrame(raw: unknown): SessionFrame | undefined {
  const parsed = WidgetServerFrame.safeParse(raw);
  if (!parsed.success) return undefined;
  const frame: SessionFrame = parsed.data;
  if (frame.type !== 'message') return frame;
  const sources = CitedSources.safeParse((raw as { sources?: unknown }).sources);
  const kept = sources.success ? sources.data.map((s) => (s.url === undefined ? { n: s.n, title: s.title } : { n: s.n, title: s.title, url: s.url })) : [];
  return Object.assign(frame, { sources: kept });
}

/** What happened in these frames, given the tool calls made meanwhile and whether a person has the conversation. */
export function observedOf(frames: SessionFrame[], calls: ToolCall[], withHuman: boolean): Observed {
  const tools = [...calls];
  const messages = frames.filter((f) => f.type === 'message');
  // A call that waits for (or was refused) its confirmation was proposed, not made: it shows as a failed call.
  for (const card of frames.filter((f) => f.type === 'confirm')) {
    const outcome = frames.find((f) => f.type === 'confirmation' && f.id === card.id);
    if (!outcome || (outcome.type === 'confirmation' && outcome.outcome !== 'approved'))
      tools.push({
        name: card.name,
        args: card.args as Record<string, unknown>,
        ok: false,
        error: outcome?.type === 'confirmation' ? outcome.outcome : 'awaiting confirmation',
      });
  }
  // The built-in handoff is no SDK call: the hand-over itself shows it was made.
  if (frames.some((f) => f.type === 'status' && f.mode === 'human') && !tools.some((t) => t.name === 'handoff')) tools.push({ name: 'handoff', ok: true });
  const replies = messages.filter((m) => !m.proactive);
  return {
    tools,
    replies: replies.map((m) => m.text),
    sources: replies.flatMap((m) => m.sources ?? []),
    proactive: messages.filter((m) => m.proactive).map((m) => m.text),
    confirmations: frames.filter((f) => f.type === 'confirm').map((c) => ({ name: c.name, args: c.args })),
    handoff: withHuman,
  };
}
