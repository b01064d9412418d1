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

/**
 * What a status says the message cost (README, "What it cost"): Meta puts the message's `pricing` on each of its
 * statuses; it is counted once, on the `sent` status, when Meta calls it billable and `prices` (per category) names
 * its category. Undefined otherwise.
 */
export function statusCost(s: { status: string; pricing?: { category: string; billable: boolean } }, prices: Record<string, number>): number | undefined {
  if (s.status !== 'sent' || !s.pricing?.billable || !Object.hasOwn(prices, s.pricing.category)) return undefined;
  return prices[s.pricing.category];
}

/** The `whatsapp.status` telemetry event's pricing fields: `pricing` as Meta reported it, and `cost` when it is counted. */
export function pricingData(
  s: { status: string; pricing?: { category: string; billable: boolean; model?: string } },
  prices: Record<string, number>,
): { pricing?: { category: string; billable: boolean; model?: string }; cost?: number } {
  if (!s.pricing) return {};
  const cost = statusCost(s, prices);
  return cost === undefined ? { pricing: s.pricing } : { pricing: s.pricing, cost };
}
