// Contract: WhatsAppStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../src/store/model.ts';
import type { Store } from '../../src/store/repos.ts';
import { freshStore } from './contract.ts';
import { engines } from './engines.ts';

const delivery = (id: string, extra: Partial<DeliveryRecord> = {}): DeliveryRecord =>
  Object.assign(
    { providerMessageId: id, jobId: `out:${id}`, sourceId: `src-${id}`, customerId: 'cus_1', to: '+15550001', status: 'sent', sentAt: 100, updatedAt: 100 },
    extra,
  );

export function describeWhatsAppContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: whatsapp`, () => {
    const store = freshStore(open);

    it('deliveries: stored whole by provider id, replaced by a later put', async () => {
      expect(await store().whatsapp.delivery('wamid.1')).toBeUndefined();
      const d = delivery('wamid.1', { conversationId: 'conv_1', errors: [{ code: 131047, title: 'Re-engagement' }] });
      await store().whatsapp.putDelivery(d);
      expect(await store().whatsapp.delivery('wamid.1')).toEqual(d);
      const read = delivery('wamid.1', { status: 'read', updatedAt: 300 });
      await store().whatsapp.putDelivery(read);
      expect(await store().whatsapp.delivery('wamid.1')).toEqual(read);
    });

    it('early statuses: put, read, removed', async () => {
      expect(await store().whatsapp.earlyStatus('wamid.2')).toBeUndefined();
      await store().whatsapp.putEarlyStatus('wamid.2', { status: 'delivered', at: 50 });
      expect(await store().whatsapp.earlyStatus('wamid.2')).toEqual({ status: 'delivered', at: 50 });
      await store().whatsapp.putEarlyStatus('wamid.2', { status: 'failed', at: 60, errors: [{ code: 1 }] });
      expect(await store().whatsapp.earlyStatus('wamid.2')).toEqual({ status: 'failed', at: 60, errors: [{ code: 1 }] });
      await store().whatsapp.removeEarlyStatus('wamid.2');
      expect(await store().whatsapp.earlyStatus('wamid.2')).toBeUndefined();
      await store().whatsapp.removeEarlyStatus('wamid.never'); // removing what is not there is fine
    });

    it('sent and send attempts by job id', async () => {
      expect(await store().whatsapp.sent('out:1')).toBeUndefined();
      await store().whatsapp.putSent('out:1', { providerMessageId: 'wamid.1', at: 10 });
      expect(await store().whatsapp.sent('out:1')).toEqual({ providerMessageId: 'wamid.1', at: 10 });
      expect(await store().whatsapp.sendAttempt('out:1')).toBeUndefined();
      await store().whatsapp.putSendAttempt('out:1', { startedAt: 5 });
      expect(await store().whatsapp.sendAttempt('out:1')).toEqual({ startedAt: 5 });
      await store().whatsapp.putSendAttempt('out:1', { startedAt: 7 });
      expect(await store().whatsapp.sendAttempt('out:1')).toEqual({ startedAt: 7 });
      await store().whatsapp.removeSendAttempt('out:1');
      expect(await store().whatsapp.sendAttempt('out:1')).toBeUndefined();
    });

    it('handled marks', async () => {
      expect(await store().whatsapp.handled('wamid.in')).toBe(false);
      await store().whatsapp.markHandled('wamid.in', 10);
      expect(await store().whatsapp.handled('wamid.in')).toBe(true);
      expect(await store().whatsapp.handled('wamid.other')).toBe(false);
    });

    it('prune forgets handled marks, sends, deliveries and early statuses older than its time, and counts them', async () => {
      await store().whatsapp.markHandled('h-old', 99);
      await store().whatsapp.markHandled('h-new', 100);
      await store().whatsapp.putSent('out:old', { providerMessageId: 'w1', at: 50 });
      await store().whatsapp.putSent('out:new', { providerMessageId: 'w2', at: 150 });
      await store().whatsapp.putDelivery(delivery('d-old', { sentAt: 10, updatedAt: 99 }));
      await store().whatsapp.putDelivery(delivery('d-new', { sentAt: 10, updatedAt: 100 })); // by its last update
      await store().whatsapp.putEarlyStatus('e-old', { status: 'read', at: 1 });
      await store().whatsapp.putSendAttempt('out:old', { startedAt: 1 });
      expect(await store().whatsapp.prune(100)).toBe(4);
      expect(await store().whatsapp.handled('h-old')).toBe(false);
      expect(await store().whatsapp.handled('h-new')).toBe(true);
      expect(await store().whatsapp.sent('out:old')).toBeUndefined();
      expect(await store().whatsapp.sent('out:new')).toBeDefined();
      expect(await store().whatsapp.delivery('d-old')).toBeUndefined();
      expect(await store().whatsapp.delivery('d-new')).toBeDefined();
      expect(await store().whatsapp.earlyStatus('e-old')).toBeUndefined();
      // A send still waiting for its answer is the outbound job's to settle, never pruned.
      expect(await store().whatsapp.sendAttempt('out:old')).toEqual({ startedAt: 1 });
      expect(await store().whatsapp.prune(100)).toBe(0);
    });
  });
}

for (const e of engines) describeWhatsAppContract(e.name, e.open);
