// The agent inbox's conversation whole (src/inbox/transcript.ts, pure) and the widget's `agent_typing` frame: a tool
// call's two records become one entry with its arguments and result, notes fall in by time, an error keeps its words;
// the frame (one zod schema for both ends) names the person typing until their message arrives.
import { describe, expect, it } from 'vitest';
import { WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';
import { webHref } from '../../inbox/src/dom.ts';
import { transcriptOf } from '../../src/inbox/transcript.ts';
import type { InboxThread, MessageRecord } from '../../src/store/model.ts';
import { initialState, reduce } from '../../widget/src/state.ts';

const rec = (id: string, role: MessageRecord['role'], at: number, text = '', data?: Record<string, unknown>): MessageRecord =>
  data ? { id, conversationId: 'c', role, text, at, data } : { id, conversationId: 'c', role, text, at };

describe('the conversation whole', () => {
  it('one entry per tool call with arguments and result (or error), confirmations, handoffs and notes in order', () => {
    const t = transcriptOf(
      [
        rec('m1', 'user', 1, 'where is 1001?'),
        rec('call1:invoked', 'tool', 2, '', { phase: 'invoked', name: 'lookupOrder', args: { orderId: '1001' } }),
        rec('call1:result', 'tool', 3, '', { phase: 'result', name: 'lookupOrder', ok: true, content: '{"status":"shipped"}', durationMs: 12 }),
        rec('r1', 'assistant', 4, 'It has shipped.'),
        rec('call2:invoked', 'tool', 5, '', { phase: 'invoked', name: 'cancelOrder', args: { orderId: '1001' } }),
        rec('call2:error', 'tool', 6, 'not_cancellable', { phase: 'error', name: 'cancelOrder', ok: false, error: 'not_cancellable' }),
        rec('k1', 'confirmation', 7, 'Cancel order 1002', { name: 'cancelOrder', outcome: 'requested' }),
        rec('k1:approved', 'confirmation', 8, 'approved', { name: 'cancelOrder', outcome: 'approved' }),
        rec('h1', 'handoff', 10, 'requested', { phase: 'requested', source: 'model', reason: 'asked' }),
        rec('a1', 'agent', 12, 'Hi, Ada here', { author: { name: 'Ada', agentId: 'ag_1' } }),
      ],
      [{ id: 'n1', conversationId: 'c', author: { agentId: 'ag_1', name: 'Ada' }, text: 'VIP', at: 11 }],
    );
    expect(t.map((e) => e.kind)).toEqual(['customer', 'tool', 'assistant', 'tool', 'confirmation', 'confirmation', 'handoff', 'note', 'agent']);
    expect(t[1]).toEqual({
      kind: 'tool',
      id: 'call1',
      at: 2,
      name: 'lookupOrder',
      args: { orderId: '1001' },
      ok: true,
      result: '{"status":"shipped"}',
      durationMs: 12,
    });
    expect(t[3]).toMatchObject({ kind: 'tool', name: 'cancelOrder', ok: false, error: 'not_cancellable' });
    expect(t[5]).toMatchObject({ kind: 'confirmation', outcome: 'approved', name: 'cancelOrder' });
    expect(t[6]).toMatchObject({ kind: 'handoff', phase: 'requested', reason: 'asked' });
    expect(t[8]).toMatchObject({ kind: 'agent', author: { name: 'Ada' } });
  });

  it("an assistant's reply keeps the sources it cites (the widget's shape); unreadable ones are left out", () => {
    const sources = [
      { n: 1, title: 'Returns and refunds', url: 'https://help.example.com/returns' },
      { n: 2, title: 'Gift cards' },
    ];
    const [cited, plain, unreadable] = transcriptOf(
      [
        rec('r1', 'assistant', 1, 'Within 30 days [1], gift cards too [2].', { sources }),
        rec('r2', 'assistant', 2, 'Anything else?'),
        rec('r3', 'assistant', 3, 'Odd.', { sources: [{ title: 'no number' }] }),
      ],
      [],
    );
    expect(cited).toEqual({ kind: 'assistant', id: 'r1', at: 1, text: 'Within 30 days [1], gift cards too [2].', sources });
    expect(plain).toEqual({ kind: 'assistant', id: 'r2', at: 2, text: 'Anything else?' });
    expect(unreadable).not.toHaveProperty('sources');
  });

  it("the inbox links a source's title only to an http(s) address", () => {
    expect(webHref('https://help.example.com/returns')).toBe('https://help.example.com/returns');
    expect(webHref('HTTP://Help.example.com/a b')).toBe('http://help.example.com/a%20b');
    for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:text/html,<b>x</b>', 'mailto:a@example.com', '/relative', '', undefined])
      expect(webHref(bad)).toBeUndefined();
  });

  it('a call still running has its arguments and no outcome', () => {
    const [call] = transcriptOf([rec('x:invoked', 'tool', 1, '', { phase: 'invoked', name: 'slow', args: { a: 1 } })], []);
    expect(call).toEqual({ kind: 'tool', id: 'x', at: 1, name: 'slow', args: { a: 1 } });
  });
});

describe('a resolution in the transcript', () => {
  const ada = { agentId: 'ag_1', name: 'Ada' };
  const thread = (handoffSince: number, resolvedAt?: number): InboxThread =>
    resolvedAt === undefined
      ? { conversationId: 'c', handoffSince, updatedAt: 1 }
      : { conversationId: 'c', handoffSince, resolvedAt, resolvedBy: ada, updatedAt: resolvedAt };
  const handedOverTwice = [
    rec('m1', 'user', 1, 'a person please'),
    rec('h:1', 'handoff', 2, 'requested', { phase: 'requested', source: 'model' }),
    rec('r:1', 'handoff', 3, 'released', { phase: 'released', by: 'agent' }),
    rec('m2', 'user', 4, 'again, please'),
    rec('h:4', 'handoff', 5, 'requested', { phase: 'requested', source: 'api' }),
    rec('a1', 'agent', 6, 'Done.', { author: ada }),
    rec('r:4', 'handoff', 7, 'released', { phase: 'released', by: 'agent' }),
    rec('m3', 'user', 9, 'thanks'),
  ];

  it('a resolve that ended a handoff stands in for its release, at its time; an earlier release stays a release', () => {
    const t = transcriptOf(handedOverTwice, [], thread(5, 8));
    expect(t.map((e) => e.kind)).toEqual(['customer', 'handoff', 'handoff', 'customer', 'handoff', 'agent', 'resolved', 'customer']);
    expect(t[2]).toMatchObject({ kind: 'handoff', phase: 'released', by: 'agent' });
    expect(t[6]).toEqual({ kind: 'resolved', id: 'r:4', at: 7, by: ada, released: true });
  });

  it("a resolve with no handoff (or whose release was not an agent's) is an entry of its own, at the time it was resolved", () => {
    const idle = handedOverTwice.map((r) => (r.id === 'r:4' ? rec('r:4', 'handoff', 7, 'released', { phase: 'released', by: 'idle' }) : r));
    for (const [records, since] of [
      [handedOverTwice, 0],
      [idle, 5],
    ] as const) {
      const t = transcriptOf([...records], [{ id: 'n1', conversationId: 'c', author: ada, text: 'closing', at: 8 }], thread(since, 8));
      expect(t.map((e) => e.kind)).toEqual(['customer', 'handoff', 'handoff', 'customer', 'handoff', 'agent', 'handoff', 'resolved', 'note', 'customer']);
      expect(t[7]).toEqual({ kind: 'resolved', id: 'resolved:8', at: 8, by: ada });
    }
  });

  it('a thread not resolved (or none) adds nothing', () => {
    for (const t of [undefined, thread(5)]) expect(transcriptOf(handedOverTwice, [], t).map((e) => e.kind)).not.toContain('resolved');
  });
});

describe('every resolve, from the history', () => {
  const ada = { agentId: 'ag_1', name: 'Ada' };
  const bob = { agentId: 'ag_2', name: 'Bob' };
  const resolvedRelease = (id: string, at: number, by: typeof ada) =>
    rec(id, 'handoff', at, 'released', { phase: 'released', by: 'agent', resolved: true, resolvedBy: by });
  const history = [
    rec('m1', 'user', 1, 'a person please'),
    rec('h:2', 'handoff', 2, 'requested', { phase: 'requested', source: 'model' }),
    resolvedRelease('r:2', 3, ada),
    rec('h:4', 'handoff', 4, 'requested', { phase: 'requested', source: 'api' }),
    rec('r:4', 'handoff', 5, 'released', { phase: 'released', by: 'agent' }),
    rec('h:6', 'handoff', 6, 'requested', { phase: 'requested', source: 'api' }),
    resolvedRelease('r:6', 7, bob),
    rec('m2', 'user', 8, 'thanks'),
    rec('v:9', 'handoff', 9, 'resolved', { phase: 'resolved', resolved: true, resolvedBy: ada }),
  ];

  it('two resolves with a release between them, and one with no handoff: each at its time, by whom, the release a release', () => {
    // The thread keeps only the latest resolution (Ada's, with no handoff): it adds nothing the history does not say.
    const thread: InboxThread = { conversationId: 'c', handoffSince: 0, resolvedAt: 10, resolvedBy: ada, updatedAt: 10 };
    for (const t of [undefined, thread]) {
      const entries = transcriptOf(history, [], t);
      expect(entries.map((e) => (e.kind === 'handoff' ? `handoff:${e.phase}` : e.kind))).toEqual([
        'customer',
        'handoff:requested',
        'resolved',
        'handoff:requested',
        'handoff:released',
        'handoff:requested',
        'resolved',
        'customer',
        'resolved',
      ]);
      expect(entries[2]).toEqual({ kind: 'resolved', id: 'r:2', at: 3, by: ada, released: true });
      expect(entries[4]).toEqual({ kind: 'handoff', id: 'r:4', at: 5, phase: 'released', by: 'agent' });
      expect(entries[6]).toEqual({ kind: 'resolved', id: 'r:6', at: 7, by: bob, released: true });
      expect(entries[8]).toEqual({ kind: 'resolved', id: 'v:9', at: 9, by: ada });
    }
  });

  it("the thread's resolution of a handoff the history resolved is not shown twice; an old one (no resolve in the history since) still is", () => {
    const upToBob = history.slice(0, 7);
    const bobs: InboxThread = { conversationId: 'c', handoffSince: 6, resolvedAt: 8, resolvedBy: bob, updatedAt: 8 };
    expect(transcriptOf(upToBob, [], bobs).filter((e) => e.kind === 'resolved')).toHaveLength(2);
    // Resolved before resolves were recorded: the release after handoff 6 says nothing, the thread says Bob.
    const old = [...history.slice(0, 6), rec('r:6', 'handoff', 7, 'released', { phase: 'released', by: 'agent' })];
    const resolved = transcriptOf(old, [], bobs).filter((e) => e.kind === 'resolved');
    expect(resolved).toEqual([
      { kind: 'resolved', id: 'r:2', at: 3, by: ada, released: true },
      { kind: 'resolved', id: 'r:6', at: 7, by: bob, released: true },
    ]);
  });

  it('a record that says resolved without a readable resolver stays a handoff record', () => {
    const [e] = transcriptOf([rec('v:1', 'handoff', 1, 'resolved', { phase: 'resolved', resolved: true, resolvedBy: { name: 'Ada' } })], []);
    expect(e).toEqual({ kind: 'handoff', id: 'v:1', at: 1, phase: 'resolved' });
  });
});

describe('the widget and agent_typing', () => {
  it('the frame is in the shared schema; the widget names the person typing until their message arrives', () => {
    const frame = WidgetServerFrame.parse({ type: 'agent_typing', on: true, agent: { name: 'Ada' } });
    expect(WidgetServerFrame.safeParse({ type: 'agent_typing', on: true }).success).toBe(false);
    let s = reduce(initialState, { type: 'frame', frame });
    expect(s).toMatchObject({ typing: true, typingAgent: 'Ada' });
    s = reduce(s, { type: 'frame', frame: { type: 'message', id: 'a1', role: 'agent', text: 'Hi', at: 1, author: { name: 'Ada' } } });
    expect(s.typing).toBe(false);
    expect(s.typingAgent).toBeUndefined();
    s = reduce(s, { type: 'frame', frame: { type: 'agent_typing', on: true, agent: { name: 'Bob' } } });
    s = reduce(s, { type: 'frame', frame: { type: 'agent_typing', on: false, agent: { name: 'Bob' } } });
    expect(s).toMatchObject({ typing: false, typingAgent: undefined });
  });
});
