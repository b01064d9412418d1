// WhatsApp's free-form window: after a customer's last inbound WhatsApp message (`Customer.lastInboundAt.whatsapp`)
// a business may answer with any text for 24 hours; later, only with an approved template. The proactive ledger and
// the agent API both decide by it, so it lives here, below both.
export const WHATSAPP_WINDOW_MS = 24 * 3_600_000;
