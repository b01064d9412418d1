// The WhatsApp channel's bookkeeping (src/whatsapp/). Part of the store's interface (../repos.ts).
import type { DeliveryRecord, EarlyStatus } from '../model.ts';

/** The WhatsApp channel's delivery bookkeeping (exactly-once sends across crashes, delivery states). */
export interface WhatsAppStore {
  delivery(providerMessageId: string): Promise<DeliveryRecord | undefined>;
  putDelivery(d: DeliveryRecord): Promise<void>;
  earlyStatus(providerMessageId: string): Promise<EarlyStatus | undefined>;
  putEarlyStatus(providerMessageId: string, s: EarlyStatus): Promise<void>;
  removeEarlyStatus(providerMessageId: string): Promise<void>;
  /** The provider accepted this outbound job's message. */
  sent(jobId: string): Promise<{ providerMessageId: string; at: number } | undefined>;
  putSent(jobId: string, v: { providerMessageId: string; at: number }): Promise<void>;
  /** A send of this job went out and its answer is not recorded yet. */
  sendAttempt(jobId: string): Promise<{ startedAt: number } | undefined>;
  putSendAttempt(jobId: string, v: { startedAt: number }): Promise<void>;
  removeSendAttempt(jobId: string): Promise<void>;
  /** An inbound message already answered as a confirmation (not a new message if its job runs again). */
  handled(waMessageId: string): Promise<boolean>;
  markHandled(waMessageId: string, at: number): Promise<void>;
  /** Forgets handled marks, sends and deliveries older than `before`; resolves with how many. */
  prune(before: number): Promise<number>;
}
