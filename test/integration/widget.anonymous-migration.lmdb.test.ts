// An LMDB store written before the anonymous namespace (issue 15 part 7; LMDB migration 4): the anonymous record
// keeps its history for its visitor and is never handed to a magic link. PostgreSQL stores were never written
// without the namespace, so this is LMDB's alone.
import { afterEach, describe, expect, it } from 'vitest';
import { createCustomerRepo } from '../../src/customers/repo.ts';
import { migrations } from '../../src/store/lmdb/migrations.ts';
import { startParley, TEST_SECRET, tempDir, type TestParley } from '../support/parley.ts';
import { openTestStore } from '../support/store.ts';
import { connectWidget } from '../support/widget-client.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const json = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };

async function init(p: TestParley, frame: Record<string, unknown>) {
  const w = await connectWidget(p.url());
  open.push(w);
  w.send(Object.assign({ type: 'init' }, frame));
  const first = await w.next((f) => f.type === 'ready' || f.type === 'error');
  return { w, first };
}

async function signIn(p: TestParley, email: string, externalId: string) {
  const res = await fetch(`${p.url()}/auth/magic-link`, { method: 'POST', headers: json, body: JSON.stringify({ email, externalId }) });
  expect(res.status).toBe(200);
  const verified = await fetch((await res.json()).url);
  expect(verified.status).toBe(200);
  return (await verified.json()) as { customerId: string; externalId: string; email: string; sessionToken: string };
}

describe('anonymous widget init on an LMDB store from before the namespace', () => {
  it('a store written before the namespace: the anonymous record keeps its history for its visitor and is never handed to a magic link', async () => {
    const storagePath = tempDir();
    // As the previous build stored an anonymous visitor: customerId = externalId = the claimed id, in the shared index.
    const old = await openTestStore(storagePath, { migrations: migrations.filter((m) => m.version <= 3) });
    const oldCustomers = createCustomerRepo(old, { now: () => Date.now() } as never);
    await oldCustomers.upsert({ externalId: 'carol-ext', customerId: 'carol-ext', email: 'mallory@evil.example' });
    await old.transaction((tx) =>
      tx.history.append({ id: 'u1', conversationId: 'conv_web_carol-ext', role: 'user', text: 'mallory was here', at: Date.now() }),
    );
    await old.close();

    const p = await startParley({ storagePath });
    open.push(p);
    const carol = await signIn(p, 'carol@real.example', 'carol-ext');
    expect(carol.customerId).not.toBe('carol-ext');
    expect(carol.email).toBe('carol@real.example');
    expect((await init(p, { customerId: carol.customerId, authToken: carol.sessionToken })).first.history).toEqual([]);
    const visitor = await init(p, { customerId: 'carol-ext', email: 'mallory@evil.example' });
    expect(visitor.first).toMatchObject({ type: 'ready', customerId: 'carol-ext' });
    expect(visitor.first.history.map((h: { text: string }) => h.text)).toEqual(['mallory was here']);
  });
});
