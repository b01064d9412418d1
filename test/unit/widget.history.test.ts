// Issue 21: answered confirmations come back on `ready` as receipts, where they were asked.
import { describe, expect, it } from 'vitest';
import { toWidgetHistory } from '../../src/web/history.ts';
import type { MessageRecord } from '../../src/conversations/history.ts';

const rec = (r: Partial<MessageRecord> & Pick<MessageRecord, 'id' | 'role' | 'text' | 'at'>): MessageRecord => ({ conversationId: 'c', ...r });

describe('toWidgetHistory', () => {
  it('messages as they are; each answered confirmation once, at its request, with its summary and outcome', () => {
    const out = toWidgetHistory([
      rec({ id: 'u1', role: 'user', text: 'Cancel order 1001', at: 1 }),
      rec({ id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 2, data: { name: 'cancelOrder', outcome: 'requested' } }),
      rec({ id: 'k1:approved', role: 'confirmation', text: 'approved', at: 5, data: { name: 'cancelOrder', outcome: 'approved' } }),
      rec({ id: 'a1', role: 'assistant', text: 'Order 1001 is cancelled.', at: 6 }),
      rec({ id: 'p1', role: 'assistant', text: 'Shipped', at: 7, proactive: true }),
      rec({ id: 'k2', role: 'confirmation', text: 'Cancel order 1002', at: 8, data: { name: 'cancelOrder', outcome: 'requested' } }),
    ]);
    expect(out).toEqual([
      { id: 'u1', role: 'user', text: 'Cancel order 1001', at: 1 },
      { id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 2, outcome: 'approved' },
      { id: 'a1', role: 'assistant', text: 'Order 1001 is cancelled.', at: 6 },
      { id: 'p1', role: 'assistant', text: 'Shipped', at: 7, proactive: true },
    ]);
  });

  it('an outcome whose request is older than the records read still shows, named after the function', () => {
    expect(
      toWidgetHistory([rec({ id: 'k9:expired', role: 'confirmation', text: 'expired', at: 3, data: { name: 'cancelOrder', outcome: 'expired' } })]),
    ).toEqual([{ id: 'k9', role: 'confirmation', text: 'cancelOrder', at: 3, outcome: 'expired' }]);
  });
});
