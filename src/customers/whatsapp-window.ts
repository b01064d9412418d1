// WhatsApp's free-form window: after a customer's last inbound WhatsApp message (`Customer.lastInboundAt.whatsapp`)
// a business may answer with any text for 24 hours; later, only with an approved template. The proactive ledger and
// the agent API and Parley's own handoff notices all decide by it, so it lives here, below them.
export const WHATSAPP_WINDOW_MS = 24 * 3_600_000;

/** True while the customer's last WhatsApp message is less than 24 hours old at `now`: free-form text may go out. */
export const insideWhatsAppWindow = (customer: { lastInboundAt?: { whatsapp?: number } } | undefined, now: number): boolean => {
  const last = customer?.lastInboundAt?.whatsapp;
  return last !== undefined && now - last < WHATSAPP_WINDOW_MS;
};
