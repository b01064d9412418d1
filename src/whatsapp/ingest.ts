// The way into the inbound queue, for the webhook and for the SDK's `ingest` frame (provider "sdk"): each message is
// de-duplicated by its WhatsApp message id and queued, one conditional write per message.
import { randomUUID } from 'node:crypto';
import type { JobQueue } from '../jobs/queue.ts';
import type { SdkHub, Services } from '../services.ts';
import { parseWhatsAppUser } from './user-id.ts';
import type { InboundWhatsApp } from './webhook-payload.ts';

export type AcceptInbound = (messages: InboundWhatsApp[], source: 'webhook' | 'sdk') => Promise<number>;

/** Webhook de-dup + queueing, one conditional write per message; resolves with the number queued. */
export function createInboundAcceptor(deps: { inbound: JobQueue<InboundWhatsApp>; telemetry: Services['telemetry'] }): AcceptInbound {
  const { inbound, telemetry } = deps;
  return async (messages, source) => {
    if (!messages.length) return 0;
    // The inbound queue's id index is the de-dup record (kept after the job is done, pruned after retention_days):
    // each message is stored only if its id is new, checked inside the commit.
    const jobs = await inbound.enqueueAll(messages.map((m) => ({ payload: m, options: { id: `wa:${m.waMessageId}` } })));
    messages.forEach((m, i) => {
      if (jobs[i]) telemetry.event({ type: 'whatsapp.inbound', channel: 'whatsapp', data: { waMessageId: m.waMessageId, kind: m.kind, source } });
    });
    return jobs.filter(Boolean).length;
  };
}

/** With provider "sdk", the SDK's `ingest` frames are the customers' messages. */
export function registerSdkIngest(deps: { services: Pick<Services, 'config' | 'clock'>; hub: SdkHub; acceptInbound: AcceptInbound }): void {
  const { services, hub, acceptInbound } = deps;
  const wa = services.config.channels.whatsapp;
  if (!wa.enabled || wa.provider !== 'sdk') return;
  const setIngest = (hub as SdkHub & { setIngestHandler?: (h: unknown) => void }).setIngestHandler;
  setIngest?.(async (frame: { channel: string; from: string; text: string; messageId?: string }) => {
    if (frame.channel !== 'whatsapp') return { ok: false, error: 'only the whatsapp channel can be ingested' };
    const user = parseWhatsAppUser(frame.from);
    if (!user) return { ok: false, error: 'from: not a phone number (E.164 expected) or a BSUID (e.g. US.13491208655302741918)' };
    const from = 'phone' in user ? user.phone : user.bsuid;
    await acceptInbound(
      [
        {
          waMessageId: frame.messageId ?? randomUUID(),
          from,
          phoneNumberId: 'sdk',
          text: frame.text,
          kind: 'text',
          timestampMs: services.clock.now(),
          ...user,
        },
      ],
      'sdk',
    );
    return { ok: true };
  });
}
