// Writes exported records (src/store/transfer.ts) into a store through its repositories, a batch per transaction.
// Messages are appended in the order given, so each conversation's sequence numbers come out as they were.
import type { Store, StoreRepos } from '../store/repos.ts';
import type { StoreRecord, StoreRecordKind } from '../store/transfer.ts';

const BATCH = 500;

async function importOne(tx: StoreRepos, r: StoreRecord): Promise<void> {
  switch (r.kind) {
    case 'customer':
      await tx.customers.save(r.value);
      // The contact address is not written by save (only by setContact).
      if (r.value.contact) await tx.customers.setContact(r.value.customerId, r.value.contact);
      return;
    case 'conversation':
      return tx.conversations.put(r.value);
    case 'message':
      await tx.history.append(r.value);
      return;
    case 'magicLink':
      await tx.links.insert(r.value.tokenHash, r.value.link);
      return;
    case 'agent':
      await tx.agents.insert(r.value);
      return;
    case 'agentCredential':
      return tx.agents.putCredential(r.value.hash, r.value.credential);
    case 'outcome':
      return tx.outcomes.put(r.value);
    case 'inboxThread': {
      const t = r.value;
      // A hold is taken again as it was; a resolution or a released hold is closed as it was.
      if (t.holder && t.resolvedAt === undefined)
        await tx.agentInbox.claim(t.conversationId, t.handoffSince, t.holder, t.claimedAt ?? t.updatedAt, [t.holder.agentId]);
      else await tx.agentInbox.close(t.conversationId, t.handoffSince, t.resolvedAt ?? t.updatedAt, t.resolvedBy);
      return;
    }
    case 'inboxNote':
      return tx.agentInbox.addNote(r.value);
    case 'savedReply':
      await tx.agentInbox.putSavedReply(r.value);
      return;
    case 'inboxRead':
      return tx.agentInbox.markRead(r.value.agentId, r.value.conversationId, r.value.at);
    case 'proactiveSend':
      return tx.proactive.recordSend(r.value);
    case 'job': {
      const { seq: _, ...job } = r.value.job;
      await tx.jobs.insert(r.value.queue, job);
      return;
    }
    case 'keptJobId': {
      const { queue, id, doneAt } = r.value;
      const job = await tx.jobs.insert(queue, { id, key: '', payload: null, attempts: 0, runAt: doneAt, enqueuedAt: doneAt });
      if (job) await tx.jobs.finish(queue, job, { keepId: true, at: doneAt });
      return;
    }
    case 'deadJob': {
      const { queue, dead, keepId } = r.value;
      const { seq: _, failedAt: __, error: ___, ...job } = dead;
      const stored = await tx.jobs.insert(queue, job);
      if (stored) await tx.jobs.bury(queue, Object.assign({}, dead, { seq: stored.seq }), { keepId });
      return;
    }
    case 'delivery':
      return tx.whatsapp.putDelivery(r.value);
    case 'earlyStatus':
      return tx.whatsapp.putEarlyStatus(r.value.providerMessageId, r.value.status);
    case 'sent':
      return tx.whatsapp.putSent(r.value.jobId, { providerMessageId: r.value.providerMessageId, at: r.value.at });
    case 'sendAttempt':
      return tx.whatsapp.putSendAttempt(r.value.jobId, { startedAt: r.value.startedAt });
    case 'handled':
      return tx.whatsapp.markHandled(r.value.waMessageId, r.value.at);
    case 'event':
    case 'turnCall':
      return; // telemetry goes through the target's writer, in batches (below)
  }
}

export async function importRecords(
  target: Store,
  records: AsyncIterable<StoreRecord>,
  onProgress: (counts: Record<StoreRecordKind, number>) => void,
): Promise<Record<StoreRecordKind, number>> {
  const counts = {} as Record<StoreRecordKind, number>;
  const telemetry = target.telemetry.writer();
  let batch: StoreRecord[] = [];
  const flush = async () => {
    const rows = batch;
    batch = [];
    if (rows.length) {
      await target.transaction(async (tx) => {
        for (const r of rows) await importOne(tx, r);
      });
    }
    if (telemetry.pending()) await telemetry.flush();
    onProgress(counts);
  };
  for await (const r of records) {
    counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    if (r.kind === 'event') telemetry.addEvent(r.value);
    else if (r.kind === 'turnCall') telemetry.addTurnCall(r.value);
    else batch.push(r);
    if (batch.length >= BATCH || telemetry.pending() >= BATCH * 4) await flush();
  }
  await flush();
  return counts;
}
