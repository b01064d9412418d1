// Delivery states of an outbound WhatsApp message only move forward:
// sent < delivered < read; failed is final. Meta's webhooks may arrive out of order.
const RANK: Record<string, number> = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 4 };

export const statusRank = (status: string) => RANK[status] ?? -1;

/** The state after `next` arrives: `next` if it moves forward, else `current`. */
export function advanceStatus(current: string | undefined, next: string): string {
  if (current === undefined) return next;
  if (current === 'failed') return current;
  return statusRank(next) > statusRank(current) ? next : current;
}
