// Delivery statuses from the webhook (sent, delivered, read, failed): stored before the webhook's 200. Statuses only
// move a delivery forward; one for a send not recorded yet is kept and applied when it is; one that echoes the job id
// of a send whose answer was lost (crash, timeout) marks that send accepted, so it is not sent twice.
import type { JobQueue } from '../jobs/queue.ts';
import type { Services, Telemetry } from '../services.ts';
import type { DeliveryRecord } from '../store/model.ts';
import type { StoreRepos } from '../store/repos.ts';
import { advanceStatus, pricingData } from './delivery-status.ts';
import type { OutboundJob } from './outbound-worker.ts';
import type { WhatsAppStatus } from './webhook-payload.ts';

type Applied = { s: WhatsAppStatus; d: DeliveryRecord | undefined; applied: boolean };

export function createStatusRecorder(deps: {
  services: Pick<Services, 'store' | 'clock' | 'config'> & { telemetry: Pick<Telemetry, 'event'> };
  outboundQueue: Pick<JobQueue<OutboundJob>, 'expedite'>;
}): (statuses: WhatsAppStatus[]) => Promise<void> {
  const { store, clock, telemetry, config } = deps.services;
  const wa = config.channels.whatsapp;
  return async (statuses) => {
    if (!statuses.length) return;
    const now = clock.now();
    const { updated, resolvedUnanswered } = await store.transaction((tx) => applyStatuses(tx, statuses, now));
    if (resolvedUnanswered) deps.outboundQueue.expedite();
    for (const { s, d, applied } of updated) {
      telemetry.event({
        type: 'whatsapp.status',
        channel: 'whatsapp',
        customerId: d?.customerId,
        conversationId: d?.conversationId,
        data: {
          status: s.status,
          providerMessageId: s.providerMessageId,
          known: d !== undefined,
          applied,
          ...(s.callbackData ? { jobId: s.callbackData } : {}),
          ...(s.errors.length ? { errors: s.errors } : {}),
          ...pricingData(s, wa.prices),
        },
      });
    }
  };
}

/** In a transaction: each status applied to its delivery (or kept early); `resolvedUnanswered` when one marked a send. */
async function applyStatuses({ whatsapp }: StoreRepos, statuses: WhatsAppStatus[], now: number): Promise<{ updated: Applied[]; resolvedUnanswered: boolean }> {
  let resolvedUnanswered = false;
  const updated: Applied[] = [];
  for (const s of statuses) {
    const errors = s.errors.length ? { errors: s.errors } : {};
    const d = await whatsapp.delivery(s.providerMessageId);
    const current = d ? d.status : (await whatsapp.earlyStatus(s.providerMessageId))?.status;
    const next = advanceStatus(current, s.status);
    const applied = next !== current;
    if (d && applied) await whatsapp.putDelivery(Object.assign({}, d, { status: next, updatedAt: now }, errors));
    if (!d && applied) await whatsapp.putEarlyStatus(s.providerMessageId, Object.assign({ status: next, at: now }, errors));
    // A status for a send whose answer we never got (crash, timeout): it was accepted.
    const jobId = s.callbackData;
    if (jobId && jobId.startsWith('out:') && s.status !== 'failed' && !(await whatsapp.sent(jobId))) {
      await whatsapp.putSent(jobId, { providerMessageId: s.providerMessageId, at: now });
      resolvedUnanswered = true;
    }
    updated.push({ s, d, applied });
  }
  return { updated, resolvedUnanswered };
}
