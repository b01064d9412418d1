// Issue 21: confirmation cards written for people, from the function's description and arguments.
import { describe, expect, it } from 'vitest';
import { describeAction } from '../../src/conversations/action-summary.ts';

describe('describeAction', () => {
  it('puts an identifier where the description names its thing: "Cancel an order" + orderId → "Cancel order 1001"', () => {
    expect(describeAction('cancelOrder', 'Cancel an order', { orderId: '1001' })).toBe('Cancel order 1001');
    // how the model finds the order is noise once the number is shown; only the first sentence is used
    expect(describeAction('cancelOrder', 'Cancel an order by its order number. Only for unshipped orders.', { orderId: '1001' })).toBe('Cancel order 1001');
    expect(describeAction('closeTicket', 'Close the ticket', { ticket_number: 77 })).toBe('Close ticket 77');
  });

  it('arguments the description does not name follow in brackets; no description → the function name in words', () => {
    expect(describeAction('refundOrder', 'Refund an order', { orderId: 'A-7', amount: 20 })).toBe('Refund order A-7 (amount: 20)');
    expect(describeAction('refund_payment', undefined, { amount: 20, currency: 'EUR' })).toBe('Refund payment (amount: 20, currency: EUR)');
    expect(describeAction('deleteAccount', '', {})).toBe('Delete account');
  });

  it('stays short, and treats odd arguments as plain values', () => {
    expect(describeAction('x', 'Do it', { note: 'y'.repeat(400) }).length).toBeLessThanOrEqual(160);
    expect(describeAction('x', 'Do it', ['a'])).toBe('Do it');
    expect(describeAction('x', 'Tag an order', { orderId: '1', tags: ['a', 'b'] })).toBe('Tag order 1 (tags: ["a","b"])');
  });
});
