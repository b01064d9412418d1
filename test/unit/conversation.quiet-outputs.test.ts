// Which outputs may wait for the turn's next write (src/conversations/quiet-outputs.ts): a read call's records do; a
// call that asks the customer first, another turn's records, and anything the customer sees or that changes something
// outside do not.
import { describe, expect, it } from 'vitest';
import type { ConversationOutput, Turn } from '../../machines/conversation.ts';
import { allMayWait, mayWait } from '../../src/conversations/quiet-outputs.ts';
import type { Pending } from '../../src/conversations/types.ts';

const read = { id: 'c1', name: 'getOrderStatus', args: { orderId: '1' }, requiresConfirmation: false, summary: 'look up order 1' };
const write = { id: 'c2', name: 'cancelOrder', args: { orderId: '1' }, requiresConfirmation: true, summary: 'cancel order 1' };

/** A turn whose model asked for both calls in its first step; `calls`: the step's calls (cleared once they are done). */
const turn = (calls = [read, write]): Turn => ({
  turnId: 't1',
  messageId: 'm1',
  step: 2,
  transcript: [
    { role: 'user', text: 'cancel order 1' },
    { role: 'assistant', toolCalls: [read, write] },
    { role: 'tool', callId: 'c1', name: 'getOrderStatus', ok: true, content: '{}' },
  ],
  calls,
  callIndex: 0,
});

const invoked = (callId: string, turnId = 't1'): ConversationOutput => ({ type: 'tool', turnId, callId, name: 'x', phase: 'invoked', args: {} });
const result = (callId: string, extra: object = {}): ConversationOutput => ({
  type: 'tool',
  turnId: 't1',
  callId,
  name: 'x',
  phase: 'result',
  content: '{}',
  ...extra,
});
const pending = (...os: ConversationOutput[]): Pending[] => os.map((o) => ({ o, at: 1 }));

describe('outputs that may wait for the next write', () => {
  it("a read call's invoked, result and failed records may wait, also once the step's calls are cleared", () => {
    expect(mayWait(invoked('c1'), { turn: turn() })).toBe(true);
    expect(mayWait(result('c1'), { turn: turn([]) })).toBe(true);
    expect(mayWait({ type: 'tool', turnId: 't1', callId: 'c1', name: 'x', phase: 'failed', content: 'no', error: 'no' }, { turn: turn([]) })).toBe(true);
  });

  it('a call that asks the customer first never waits: neither its start nor its result (with or without a receipt)', () => {
    expect(mayWait(invoked('c2'), { turn: turn() })).toBe(false);
    expect(mayWait(result('c2'), { turn: turn([]) })).toBe(false);
    expect(mayWait(result('c1', { confirmationId: 't1:1:c1', receipt: 'done' }), { turn: turn() })).toBe(false);
  });

  it("a call the turn does not know, another turn's record, no turn at all, and every other output: written at once", () => {
    expect(mayWait(invoked('c9'), { turn: turn() })).toBe(false);
    expect(mayWait(invoked('c1', 't0'), { turn: turn() })).toBe(false);
    expect(mayWait(invoked('c1'), { turn: undefined })).toBe(false);
    const others: Pending['o'][] = [
      { type: 'customer', messageId: 'm2', text: 'hi' },
      { type: 'reply', id: 'r1', turnId: 't1', text: 'ok', replyTo: 'm1' },
      { type: 'turn', turnId: 't1', phase: 'ended', messageId: 'm1' },
      { type: 'confirm', id: 'k1', turnId: 't1', name: 'cancelOrder', args: {}, summary: 'cancel' },
      { type: 'handoff', id: 'h:1', phase: 'requested', source: 'model' },
    ];
    for (const o of others) expect(mayWait(o, { turn: turn() }), o.type).toBe(false);
  });

  it('a batch may wait only when it is not empty and all of it may', () => {
    expect(allMayWait(pending(invoked('c1'), result('c1')), { turn: turn() })).toBe(true);
    expect(allMayWait([], { turn: turn() })).toBe(false);
    expect(allMayWait(pending(invoked('c1'), { type: 'turn', turnId: 't1', phase: 'ended', messageId: 'm1' }), { turn: turn() })).toBe(false);
  });
});
