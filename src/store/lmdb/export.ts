// Every record of an LMDB store, as domain records (src/store/transfer.ts), for `migrate-store`. Read straight from
// the key layouts of src/store/lmdb/repos/ and the telemetry segments.
import type { Channel } from '../model.ts';
import type { StoreRecord, StoreRecordValue as V } from '../transfer.ts';
import type { Kv } from './kv.ts';
import { fromStored } from './repos/conversations.ts';
import { eventCodec, turnCallCodec } from './telemetry/codec.ts';
import { readRange } from './telemetry/segment-reader.ts';

type IdEntry = number | { doneAt: number };

export async function* exportLmdb(kv: Kv): AsyncGenerator<StoreRecord> {
  for (const { value } of kv.range<V<'customer'>>('customers')) yield { kind: 'customer', value };
  for (const { value } of kv.range<V<'conversation'>>('conversations')) yield { kind: 'conversation', value: fromStored(value) };
  // ['m', conversationId, seq]: per conversation, in sequence order.
  for (const { value } of kv.range<V<'message'>>('messages', { start: ['m'], end: ['m', '\uffff'] })) yield { kind: 'message', value };
  for (const { key, value } of kv.range<V<'magicLink'>['link']>('magicLinks')) yield { kind: 'magicLink', value: { tokenHash: key as string, link: value } };
  for (const { value } of kv.range<V<'agent'>>('agents')) yield { kind: 'agent', value };
  for (const { key, value } of kv.range<V<'agentCredential'>['credential']>('agentCredentials'))
    yield { kind: 'agentCredential', value: { hash: key as string, credential: value } };
  for (const { value } of kv.range<V<'outcome'>>('outcomes')) yield { kind: 'outcome', value };
  for (const { value } of kv.range<V<'inboxThread'>>('inboxThreads')) yield { kind: 'inboxThread', value };
  for (const { value } of kv.range<V<'inboxNote'>>('inboxNotes')) yield { kind: 'inboxNote', value };
  for (const { value } of kv.range<V<'savedReply'>>('savedReplies')) yield { kind: 'savedReply', value };
  for (const { key, value } of kv.range<number>('inboxReads')) {
    const [agentId, conversationId] = key as [string, string];
    yield { kind: 'inboxRead', value: { agentId, conversationId, at: value } };
  }

  // A send and the dedup key that points at it (by messageId) are one record on the way out.
  const dedupOf = new Map<string, string>();
  for (const { key, value } of kv.range<{ sentAt: number; messageId: string }>('proactive', { start: ['dedup'], end: ['dedup', '\uffff'] })) {
    dedupOf.set(value.messageId, (key as [string, string, string])[2]);
  }
  for (const { key, value } of kv.range<{ channel: Channel }>('proactive', { start: ['sent'], end: ['sent', '\uffff'] })) {
    const [, customerId, at, messageId] = key as [string, string, number, string];
    yield { kind: 'proactiveSend', value: { customerId, messageId, at, channel: value.channel, dedupKey: dedupOf.get(messageId) } };
  }

  const kept = new Map<string, IdEntry>();
  for (const { key, value } of kv.range<IdEntry>('jobs', { start: ['id'], end: ['id', '\uffff'] })) {
    const [, queue, id] = key as [string, string, string];
    kept.set(`${queue}\u0000${id}`, value);
  }
  for (const { key, value } of kv.range<V<'job'>['job']>('jobs', { start: ['q'], end: ['q', '\uffff'] }))
    yield { kind: 'job', value: { queue: (key as string[])[1], job: value } };
  for (const { key, value } of kv.range<V<'deadJob'>['dead']>('jobs', { start: ['dead'], end: ['dead', '\uffff'] })) {
    const queue = (key as string[])[1];
    const keepId = typeof kept.get(`${queue}\u0000${value.id}`) === 'object';
    if (keepId) kept.delete(`${queue}\u0000${value.id}`);
    yield { kind: 'deadJob', value: { queue, dead: value, keepId } };
  }
  for (const [k, entry] of kept) {
    if (typeof entry !== 'object') continue; // a queued job's own index entry
    const [queue, id] = k.split('\u0000');
    yield { kind: 'keptJobId', value: { queue, id, doneAt: entry.doneAt } };
  }

  for (const { key, value } of kv.range<V<'delivery'> | V<'earlyStatus'>['status']>('outbox')) {
    const k = key as string;
    if (k.startsWith('early:'))
      yield { kind: 'earlyStatus', value: { providerMessageId: k.slice('early:'.length), status: value as V<'earlyStatus'>['status'] } };
    else yield { kind: 'delivery', value: value as V<'delivery'> };
  }
  for (const { key, value } of kv.range<{ providerMessageId: string; at: number }>('sent')) {
    yield { kind: 'sent', value: { jobId: key as string, providerMessageId: value.providerMessageId, at: value.at } };
  }
  for (const { key, value } of kv.range<{ startedAt: number }>('sendAttempts'))
    yield { kind: 'sendAttempt', value: { jobId: key as string, startedAt: value.startedAt } };
  for (const { key, value } of kv.range<number>('webhookSeen')) {
    const k = key as string;
    if (k.startsWith('handled:wa:')) yield { kind: 'handled', value: { waMessageId: k.slice('handled:wa:'.length), at: value } };
  }

  for (const e of readRange<V<'event'>>(kv, 'telemetry', eventCodec())) yield { kind: 'event', value: e };
  for (const c of readRange<V<'turnCall'>>(kv, 'turnCalls', turnCallCodec())) yield { kind: 'turnCall', value: c };
}
