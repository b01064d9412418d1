// `provider: sdk`: replies go out through an SDK's `onSend`. The id handed to
// onSend is the outbound job's id, the same on every attempt, so the
// integrator can de-duplicate a resend.
import { randomUUID } from 'node:crypto';
import type { SdkHub } from '../services.ts';
import { renderText, type WhatsAppSender } from './outbound.ts';

export function createSdkSender(hub: Pick<SdkHub, 'canSend' | 'send'>, timeoutMs: number): WhatsAppSender {
  return {
    name: 'sdk',
    ready: () => hub.canSend(),
    async send(m) {
      if (!hub.canSend()) return { ok: false, retryable: true, message: 'No connected SDK delivers WhatsApp messages (onSend) yet' };
      const id = m.callbackData ?? randomUUID();
      const r = await hub.send({ id, channel: 'whatsapp', to: m.to, content: renderText(m) }, timeoutMs);
      if (r.ok) return { ok: true, providerMessageId: r.messageId ?? id };
      // No answer from onSend (timed out, or the connection closed meanwhile): it may have delivered.
      const uncertain = r.error === 'timeout' || r.error === 'disconnected';
      return { ok: false, retryable: true, uncertain, message: r.error ?? 'onSend failed' };
    },
  };
}
