// The conversation host's writes: an active conversation's next write goes out at the version its last one left
// (`conversations.persist` at that version: on PostgreSQL one statement, no read of the record, when there is nothing
// else to write), while nobody else wrote its record; when somebody did, the store keeps what the other writer wrote.
// A write that stores a customer message or a reply also folds the outcome in (outcomes.in-write.test.ts): it has
// something else to write, so it is a transaction, at the version all the same.
import { afterEach, describe, expect, it } from 'vitest';
import type { PersistOutcome, Store } from '../../src/store/repos.ts';
import { startParley, type TestParley } from '../support/parley.ts';
import { historyOf } from '../support/store.ts';
import { startWidgetSession, type WidgetClient } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/**
 * Every `persist` from now on: `version`, the version written when it was written at the version the writer expected
 * (undefined when it was not: the record was new to this writer, or another writer had moved it on); `alone`, whether
 * it had nothing else to write (the one-statement write on PostgreSQL).
 */
function watchWrites(store: Store): { version: number | undefined; alone: boolean }[] {
  const writes: { version: number | undefined; alone: boolean }[] = [];
  const original = store.conversations.persist.bind(store.conversations);
  store.conversations.persist = async (record, messages, expected, channelWrites) => {
    const outcome: PersistOutcome = await original(record, messages, expected, channelWrites);
    const atExpected = expected.version !== undefined && 'version' in outcome && !outcome.othersWrote;
    writes.push({ version: atExpected && 'version' in outcome ? outcome.version : undefined, alone: channelWrites === undefined });
    return outcome;
  };
  return writes;
}

async function turn(w: WidgetClient, id: string, text: string) {
  w.send({ type: 'message', id, text });
  await w.next((f) => f.type === 'ack' && f.id === id);
  await w.next((f) => f.type === 'message');
}

async function session(): Promise<{ p: TestParley; w: WidgetClient; conversationId: string }> {
  const p = await startParley();
  open.push(p);
  const w = await startWidgetSession(p.url(), { customerId: 'writer-1', email: 'w@example.com' });
  open.push(w);
  return { p, w, conversationId: 'conv_web_writer-1' };
}

describe('the conversation host writes', () => {
  it("an active conversation's writes go out at the version its last one left: the first turn reads the record, the next ones do not", async () => {
    const { p, w, conversationId } = await session();
    const writes = watchWrites(p.services.store);
    await turn(w, 'm1', 'hello');
    // The actor was new: its first write read the record in a transaction; the later ones of the turn did not.
    expect(writes[0]?.version).toBeUndefined();
    const firstTurn = writes.length;
    await turn(w, 'm2', 'hello again');
    const secondTurn = writes.slice(firstTurn).map((x) => x.version);
    // The customer message's write and the reply's, each saved at the version the last one left (with the outcome).
    expect(secondTurn.length).toBeGreaterThanOrEqual(2);
    expect(secondTurn.every((v) => v !== undefined)).toBe(true);
    for (let i = 1; i < secondTurn.length; i++) expect(secondTurn[i]).toBe(secondTurn[i - 1]! + 1);
    expect(writes.slice(firstTurn).some((x) => x.alone)).toBe(false);
    expect((await historyOf(p.services.store, conversationId)).map((r) => `${r.role}:${r.role === 'user' ? r.id : ''}`)).toEqual([
      'user:m1',
      'assistant:',
      'user:m2',
      'assistant:',
    ]);
  });

  it("another writer's fields survive the next turn: the one-statement write is refused and the transaction keeps them", async () => {
    const { p, w, conversationId } = await session();
    const store = p.services.store;
    await turn(w, 'm1', 'hello');
    // The reflection daemon's way of writing: lock, read, put with its verdict.
    const reflection = { verdict: 'unresolved' as const, summary: 'still waiting for a refund', at: 123 };
    await store.transaction(async (tx) => {
      const current = await tx.conversations.lock(conversationId);
      await tx.conversations.put(Object.assign({}, current!, { reflection, reviewedAt: 123 }));
    });
    const writes = watchWrites(store);
    await turn(w, 'm2', 'any news?');
    // Written in a transaction that kept the other writer's fields; the writes after it are at the version again.
    expect(writes[0]?.version).toBeUndefined();
    expect(writes.slice(1).length).toBeGreaterThanOrEqual(1);
    expect(writes.slice(1).every((x) => x.version !== undefined)).toBe(true);
    const record = await store.conversations.get(conversationId);
    expect(record?.reflection).toEqual(reflection);
    // The customer's new message clears the verdict's time (it is due for review again), as the transaction does.
    expect(record?.reviewedAt).toBeUndefined();
    expect(record?.lastCustomerMessageAt).toBeGreaterThan(0);
    expect((await historyOf(store, conversationId)).filter((r) => r.role === 'user').map((r) => r.id)).toEqual(['m1', 'm2']);
  });
});
