// Proactive guardrails across several Parley processes on one PostgreSQL (issue 17, parts 6 and 8): the customer's
// row is locked in the database for the whole check-and-record, so concurrent requests spread over two nodes give
// exactly one accepted send for a dedup key and exactly `daily_cap` sends under the cap.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnParley, tempDir, TEST_SECRET, type ParleyProcess } from '../support/parley.ts';
import { createMigratedTestDatabase } from '../support/shared-postgres.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const headers = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
const post = async (p: ParleyProcess, path: string, body: unknown) =>
  (await fetch(`${p.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>;

async function node(db: string, nodeId: string): Promise<ParleyProcess> {
  const p = await spawnParley({
    storagePath: tempDir(),
    config: { storage: { engine: 'postgres', url: db }, cluster: { node_id: nodeId, lease_seconds: 2 }, proactive: { enabled: true, daily_cap: 3 } },
  });
  cleanups.push(() => p.kill('SIGKILL'));
  return p;
}

/** A customer known by email (magic link followed), opted in. */
async function customer(p: ParleyProcess, externalId: string) {
  const { url } = (await post(p, '/auth/magic-link', { email: `${externalId}@example.com`, externalId })) as { url: string };
  expect((await fetch(url)).status).toBe(200);
  expect(await post(p, '/proactive/opt-in', { customerExternalId: externalId, optIn: true })).toMatchObject({ optIn: true });
}

describe('proactive guardrails across nodes', () => {
  it('200 concurrent requests with one dedupKey over two nodes → exactly 1 accepted; cap 3 with 100 concurrent → exactly 3', async () => {
    const db = await createMigratedTestDatabase();
    const nodes = [await node(db, 'node-a'), await node(db, 'node-b')];
    await customer(nodes[0], 'same-key');
    await customer(nodes[1], 'capped');

    const same = await Promise.all(
      Array.from({ length: 200 }, (_, i) => post(nodes[i % 2], '/proactive', { customerExternalId: 'same-key', channel: 'web', content: 'x', dedupKey: 'k' })),
    );
    expect(same.filter((r) => r.accepted === true)).toHaveLength(1);
    expect(same.filter((r) => r.reason === 'Duplicate (dedupKey already sent)')).toHaveLength(199);

    const capped = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        post(nodes[i % 2], '/proactive', { customerExternalId: 'capped', channel: 'web', content: `m${i}`, dedupKey: `d${i}` }),
      ),
    );
    expect(capped.filter((r) => r.accepted === true)).toHaveLength(3);
    expect(capped.filter((r) => r.reason === 'Daily proactive limit reached')).toHaveLength(97);
  }, 60_000);
});
