// One write of a conversation's write loop, and what a committed write publishes. The record and its history records
// come from records.ts (pure); the store decides how to write them (`conversations.persist`: one statement or one
// transaction), checks the owner (fencing) and is the authority on which customer messages it has already.
import type { StoreRepos } from '../store/repos.ts';
import type { ConversationMeta } from '../store/model.ts';
import { telemetryOf, writeOf } from './records.ts';
import type { Active, Runtime } from './runtime.ts';
import type { OutputRecorder, Pending } from './types.ts';

/**
 * Whether nothing but the record and its history is written (no inbox entries to remove, nothing for a recorder to
 * write — webhook events, outcome facts — none for the channel to queue): the store may then write without a transaction.
 */
function writesAlone(rt: Runtime, a: Active, entries: Pending[], inboxDone: number[], recorders: OutputRecorder[]): boolean {
  const sink = rt.deps.sinks[a.meta.channel];
  return inboxDone.length === 0 && recorders.length === 0 && entries.every((e) => e.inboxId === undefined && (e.o.type === 'customer' || !sink?.write));
}

/** In the write's transaction: the channel's writes, the inbox entries taken, what the recorders write (webhook events, the outcome). */
function channelWritesOf(rt: Runtime, a: Active, entries: Pending[], inboxDone: number[], recorders: OutputRecorder[], afterCommit: (() => void)[]) {
  return async (tx: StoreRepos) => {
    const sink = rt.deps.sinks[a.meta.channel];
    if (sink?.write) for (const { o } of entries) if (o.type !== 'customer') await sink.write(tx, a.meta, o);
    const taken = inboxDone.concat(entries.filter((e) => e.inboxId !== undefined).map((e) => e.inboxId!));
    if (taken.length) await tx.inbox.remove(taken);
    for (const recorder of recorders) afterCommit.push(await recorder.record(tx, a.meta, entries));
  };
}

/**
 * Writes `batch` with the actor's state now (read before anything is awaited): resolves with the entries stored — a
 * customer message the store already has is not (its inbox entry is removed all the same) — and what to run once
 * committed (`afterCommit`, filled as the transaction goes: the caller keeps it for a write whose answer is lost).
 * Throws what the store throws (`OwnershipLostError` when fenced); the write loop decides what follows.
 */
export async function writeBatch(
  rt: Runtime,
  a: Active,
  batch: Pending[],
  inboxDone: number[],
  afterCommit: (() => void)[] = [],
): Promise<{ written: Pending[]; afterCommit: (() => void)[] }> {
  const actor = { snapshot: a.actor.getPersistedSnapshot(), value: a.actor.getSnapshot().value };
  const owner = a.epoch === undefined ? undefined : { nodeId: rt.deps.cluster!.ownership.nodeId(), epoch: a.epoch };
  let entries = batch;
  const done = inboxDone.slice();
  for (;;) {
    const { record, messages } = writeOf(a.meta, a.written?.fields, actor, rt.deps.services.clock.now(), entries);
    // Built for each attempt: an attempt the store answered with `seen` wrote nothing, and what it meant to record
    // (the facts of the customer messages it had already) is not recorded again.
    afterCommit.length = 0;
    const recorders = (rt.deps.recorders ?? []).filter((r) => r.wants(a.meta, entries));
    const channelWrites = writesAlone(rt, a, entries, done, recorders) ? undefined : channelWritesOf(rt, a, entries, done, recorders, afterCommit);
    const outcome = await rt.deps.services.store.conversations.persist(record, messages, { version: a.written?.version, owner }, channelWrites);
    if ('seen' in outcome) {
      // Stored already (the store is the authority): written again without them.
      const seen = new Set(outcome.seen);
      const known = (e: Pending) => e.o.type === 'customer' && seen.has(e.o.messageId);
      for (const e of entries) if (known(e) && e.inboxId !== undefined) done.push(e.inboxId);
      entries = entries.filter((e) => !known(e));
      continue;
    }
    const { snapshot: _, ...fields } = outcome.record;
    a.written = { fields, version: outcome.version };
    return { written: entries, afterCommit };
  }
}

/**
 * Outputs now durable: telemetry, observers, and the channel — live delivery, and for a customer message its
 * acknowledgement to its sender — in order. Nothing here throws.
 */
export function publish(rt: Runtime, meta: ConversationMeta, written: Pending[]): void {
  const { telemetry, config } = rt.deps.services;
  const sink = rt.deps.sinks[meta.channel];
  for (const entry of written) {
    const event = telemetryOf(meta, entry, config.telemetry.store_text);
    if (event) telemetry.event(event);
    for (const observe of rt.deps.observers ?? []) {
      try {
        observe(meta, entry);
      } catch (err) {
        rt.log.warn({ err }, 'output observer failed');
      }
    }
    try {
      if (entry.o.type === 'customer') sink?.accepted?.(meta, entry.o);
      else sink?.deliver?.(meta, entry.o);
    } catch (err) {
      rt.log.warn({ err }, 'live delivery failed');
    }
  }
}
