// Several Parley nodes on one PostgreSQL (issue 17, part 1): each joins with a lease in database time and
// heartbeats; /ready and /diagnostics show every node with its lease's age and what it reported of its SDK
// connections; a node that cannot renew (its row taken over, or the database silent for a whole lease) stops its
// work and joins again under a new id. On LMDB the cluster is the one process.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.ts';
import { createParley, type Parley } from '../../src/app.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createLogger } from '../../src/logger.ts';
import type { LeaseLoss } from '../../src/cluster/membership.ts';
import { spawnParley, startParley, TEST_SECRET, tempDir, testConfig, type TestParley } from '../support/parley.ts';
import { startPostgres } from '../support/postgres.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';
import { sql } from '../support/sql.ts';
import { startWidgetSession } from '../support/widget-client.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

async function node(url: string, nodeId: string | undefined, leaseSeconds = 1): Promise<TestParley> {
  const p = await startParley({ config: { storage: { engine: 'postgres', url }, cluster: { node_id: nodeId, lease_seconds: leaseSeconds } } });
  closers.push(() => p.close());
  return p;
}

/** The log lines saying the lease was lost: their level and node. */
const lossLines = (p: TestParley) =>
  p.logs
    .map((l) => JSON.parse(l) as { level: number; msg: string; nodeId?: string })
    .filter((l) => l.msg.startsWith('this node lost its cluster lease'))
    .map((l) => ({ level: l.level, nodeId: l.nodeId }));

const ready = async (p: { url(): string }) => {
  const res = await fetch(`${p.url()}/ready`);
  return { status: res.status, body: await res.json() };
};

describe('cluster nodes on PostgreSQL', () => {
  it('/ready and /diagnostics on either node list both, alive, with lease ages and each node’s SDK connections; a node that stops leaves', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const b = await node(url, 'node-b');
    const sdk = createClient();
    sdk.expose('getOrderStatus', { description: 'Order status' }, async () => ({}));
    sdk.expose('cancelOrder', { description: 'Cancel', mode: 'write' }, async () => ({}));
    await sdk.listen({ url: b.url(), secret: TEST_SECRET });
    closers.push(() => sdk.close());

    // A sees B's connection once B has heartbeaten with it.
    await expect
      .poll(async () => (await ready(a)).body.cluster.nodes.find((n: { nodeId: string }) => n.nodeId === 'node-b')?.sdk, { timeout: 15_000 })
      .toEqual({ connections: 1, functions: 2 });
    const { status, body } = await ready(a);
    expect(status).toBe(200);
    expect(body.checks.sdk).toEqual({ connected: false, functions: 0 }); // the spec's checks stay this node's
    expect(body.cluster).toMatchObject({ nodeId: 'node-a', status: 'member', leaseSeconds: 1 });
    expect(body.cluster.nodes.map((n: { nodeId: string; self: boolean; alive: boolean }) => [n.nodeId, n.self, n.alive])).toEqual([
      ['node-a', true, true],
      ['node-b', false, true],
    ]);
    for (const n of body.cluster.nodes) {
      expect(n.leaseAgeMs).toBeGreaterThanOrEqual(0);
      expect(n.leaseAgeMs).toBeLessThan(1000);
      expect(n.leaseLeftMs).toBeGreaterThan(0);
      expect(n.leaseLeftMs).toBeLessThanOrEqual(1000);
      expect(n.conversations).toEqual({ active: 0, owned: 0 });
    }
    expect(body.cluster.nodes[0].sdk).toEqual({ connections: 0, functions: 0 });

    const diagnostics = await (await fetch(`${b.url()}/diagnostics`)).json();
    expect(diagnostics.cluster).toMatchObject({ nodeId: 'node-b', status: 'member' });
    expect(diagnostics.cluster.nodes.find((n: { self: boolean }) => n.self)).toMatchObject({ nodeId: 'node-b', sdk: { connections: 1, functions: 2 } });

    await sdk.close();
    await b.close();
    await expect.poll(async () => (await ready(a)).body.cluster.nodes.map((n: { nodeId: string }) => n.nodeId), { timeout: 15_000 }).toEqual(['node-a']);
  });

  it('a node whose row another instance took over loses its lease: its onLost listeners run (not ready meanwhile), then it joins as node-a.2', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const losses: LeaseLoss[] = [];
    let finish!: () => void;
    const stopped = new Promise<void>((r) => (finish = r));
    a.runtime.cluster.onLost(async (loss) => {
      losses.push(loss);
      await stopped; // the runtime stopping its actors
    });
    const rejoined: string[] = [];
    a.runtime.cluster.onJoined((id) => rejoined.push(id));

    await sql(url, `UPDATE nodes SET instance = 'intruder' WHERE node_id = 'node-a'`);
    await expect.poll(() => losses.length, { timeout: 15_000 }).toBe(1);
    expect(losses[0]).toEqual({ nodeId: 'node-a', reason: 'the lease had ended, or another instance took the id over' });
    const meanwhile = await ready(a);
    expect(meanwhile.status).toBe(503);
    expect(meanwhile.body.error.message).toMatch(/^cluster: rejoining: lost the lease of node-a/);
    expect(meanwhile.body.cluster.status).toBe('rejoining');
    await new Promise((r) => setTimeout(r, 500));
    expect(rejoined).toEqual([]); // not before the listeners are done

    finish();
    await expect.poll(async () => (await ready(a)).status, { timeout: 15_000 }).toBe(200);
    expect(rejoined).toEqual(['node-a.2']);
    expect((await ready(a)).body.cluster).toMatchObject({ nodeId: 'node-a.2', status: 'member' });
    const diagnostics = await (await fetch(`${a.url()}/diagnostics`)).json();
    expect(diagnostics.cluster.lastLoss).toEqual(losses[0]);
    expect(lossLines(a)).toEqual([{ level: 50, nodeId: 'node-a' }]); // error: something took this node's place
    const rows = await sql<{ node_id: string; instance: string }>(url, 'SELECT node_id, instance FROM nodes ORDER BY node_id');
    expect(rows.map((r) => r.node_id)).toEqual(['node-a', 'node-a.2']);
    expect(rows[0].instance).toBe('intruder');
  });

  it('a database that stops answering for a whole lease is a lost lease; the node joins again once it is back', async () => {
    const server = await startPostgres();
    closers.push(() => server.close());
    const url = await server.createDatabase();
    const a = await node(url, 'node-a');
    const losses: LeaseLoss[] = [];
    a.runtime.cluster.onLost((loss) => void losses.push(loss));
    await server.kill('SIGSTOP');
    const stoppedAt = Date.now();
    try {
      await expect.poll(() => losses.length, { timeout: 15_000, interval: 20 }).toBe(1);
      // Within the lease (1 s) and a heartbeat of its end, and not before the lease could have ended.
      expect(Date.now() - stoppedAt).toBeLessThan(2500);
      expect(losses[0].nodeId).toBe('node-a');
      expect(a.runtime.cluster.status()).toBe('rejoining');
    } finally {
      await server.kill('SIGCONT');
    }
    await expect.poll(() => a.runtime.cluster.status(), { timeout: 20_000 }).toBe('member');
    expect(a.runtime.cluster.nodeId()).toMatch(/^node-a\.\d+$/);
    // A warning, not an error: the outage is reported already, and the node recovered by itself.
    expect(lossLines(a)).toEqual([{ level: 40, nodeId: 'node-a' }]);
  });

  it('a conversation being activated when the lease is lost starts no actor and writes nothing: its message is refused, and answered once sent again', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    const w = await startWidgetSession(a.url(), { customerId: 'span-1', email: 'span@example.com' });
    closers.push(async () => w.close());
    // The activation's read waits (a slow database) until this node has lost its lease and stopped its actors.
    const conversations = a.services.store.conversations;
    const realGet = conversations.get.bind(conversations);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reading!: () => void;
    const held = new Promise<void>((r) => (reading = r));
    conversations.get = async (id) => {
      if (id === 'conv_web_span-1') {
        reading();
        await gate;
      }
      return realGet(id);
    };
    // Listeners run in order: the runtime's (every actor stopped) first, then this one, which holds the rejoin.
    let rejoin!: () => void;
    const rejoining = new Promise<void>((r) => (rejoin = r));
    closers.push(async () => rejoin()); // a failed assertion must not leave the node's stop waiting on this listener
    a.runtime.cluster.onLost(async () => {
      release();
      await rejoining;
    });

    w.send({ type: 'message', id: 'm1', text: 'where is my order 1001?' });
    await held;
    await sql(url, `UPDATE nodes SET instance = 'intruder' WHERE node_id = 'node-a'`);
    const answer = await w.next((f) => (f.type === 'ack' || f.type === 'error') && (f.id === 'm1' || f.type === 'error'), 10_000);
    expect(answer, 'claimed under the lost lease: nothing is written, nothing acknowledged').toMatchObject({ type: 'error', code: 'unavailable' });
    expect(a.runtime.host.isActive('conv_web_span-1')).toBe(false);
    conversations.get = realGet;
    rejoin();
    await expect.poll(async () => (await ready(a)).status, { timeout: 15_000 }).toBe(200);

    w.send({ type: 'message', id: 'm1', text: 'where is my order 1001?' });
    await w.next((f) => f.type === 'ack' && f.id === 'm1');
    await w.next((f) => f.type === 'message' && f.id === 'conv_web_span-1:m1:r');
    const stored = await sql<{ id: string }>(url, `SELECT id FROM messages WHERE conversation_id = 'conv_web_span-1' ORDER BY seq`);
    expect(stored.map((r) => r.id)).toEqual(['m1', 'conv_web_span-1:m1:r']);
  });

  it('an inbox entry of an active conversation whose wake-up never came is drained by the takeover sweep and answered', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a'); // a 1 s lease: a sweep every 200 ms
    const w = await startWidgetSession(a.url(), { customerId: 'quiet-1', email: 'quiet@example.com' });
    closers.push(async () => w.close());
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.id === 'conv_web_quiet-1:m1:r');
    expect(a.runtime.host.isActive('conv_web_quiet-1')).toBe(true);
    // What another node stores when this one owns the conversation, but its notice never arrives.
    await a.services.store.inbox.post(
      'conv_web_quiet-1',
      { type: 'customer', customerId: 'quiet-1', channel: 'web', message: { messageId: 'm2', text: 'are you there?' } },
      a.services.clock.now(),
    );
    const answered = await w.next((f) => f.type === 'message' && f.id === 'conv_web_quiet-1:m2:r', 15_000);
    expect(answered.role).toBe('assistant');
    expect(await a.services.store.inbox.list('conv_web_quiet-1')).toEqual([]);
    expect(a.logs.some((l) => l.includes('drained inboxes whose wake-up was lost'))).toBe(true);
  });

  it('a drain that read the inbox before the previous drain’s write committed applies nothing twice (an agent’s message shown once)', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a', 5); // sweeps far apart: only the drains below apply the entry
    const id = 'conv_web_twice-1';
    const w = await startWidgetSession(a.url(), { customerId: 'twice-1', email: 'twice@example.com' });
    closers.push(async () => w.close());
    w.send({ type: 'message', id: 'm1', text: 'hello' });
    await w.next((f) => f.type === 'message' && f.id === `${id}:m1:r`);
    expect((await a.runtime.host.handoff(id, 'a person, please')).ok).toBe(true);
    await a.services.store.inbox.post(id, { type: 'agent', message: { id: 'g1', text: 'Ann here', author: { name: 'Ann' } } }, a.services.clock.now());

    // The second drain's read is answered late: with what the inbox held before the first drain's write committed.
    const inbox = a.services.store.inbox;
    const realList = inbox.list.bind(inbox);
    let reads = 0;
    inbox.list = async (conversationId) => {
      const entries = await realList(conversationId);
      if (++reads !== 2) return entries;
      while ((await realList(conversationId)).length) await new Promise((r) => setTimeout(r, 20));
      return entries;
    };
    await Promise.all([a.runtime.host.drainInbox(id), a.runtime.host.drainInbox(id)]);
    inbox.list = realList;
    await a.runtime.host.settle();
    expect(reads).toBe(2);
    const agent = await sql<{ id: string }>(url, `SELECT id FROM messages WHERE conversation_id = '${id}' AND role = 'agent'`);
    expect(agent.map((r) => r.id)).toEqual(['g1']);
    await new Promise((r) => setTimeout(r, 200));
    expect(w.frames.filter((f) => f.type === 'message' && f.role === 'agent').map((f) => f.id)).toEqual(['g1']);
  });

  it('a node SIGKILLed is shown not alive by the others within a heartbeat or two, well before its lease ends', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a', 5);
    const b = await spawnParley({ storagePath: tempDir(), config: { storage: { engine: 'postgres', url }, cluster: { node_id: 'node-b', lease_seconds: 5 } } });
    closers.push(() => b.kill('SIGKILL'));
    const nodeB = async () => (await ready(a)).body.cluster.nodes.find((n: { nodeId: string }) => n.nodeId === 'node-b');
    await expect.poll(async () => (await nodeB())?.alive, { timeout: 15_000 }).toBe(true);
    await b.kill('SIGKILL');
    const killedAt = Date.now();
    await expect.poll(async () => (await nodeB())?.alive, { timeout: 15_000, interval: 50 }).toBe(false);
    expect(Date.now() - killedAt).toBeLessThan(3000);
    expect((await nodeB()).leaseLeftMs).toBeGreaterThan(0); // its lease had not ended: its connections were gone
  }, 120_000);

  it('heartbeats do not hide a database migrated further by a newer Parley: /ready names it within the probe’s 5 s', async () => {
    const url = await createTestDatabase();
    const a = await node(url, 'node-a');
    expect((await ready(a)).status).toBe(200);
    await sql(url, `INSERT INTO parley_schema_migrations (version, name) VALUES (99, 'from_a_newer_parley')`);
    await expect.poll(async () => (await ready(a)).body.checks.migrations, { timeout: 8000, interval: 200 }).toMatch(/^data is newer \(99\) than this build/);
    expect((await ready(a)).status).toBe(503);
  });

  it('a second process configured with the node_id of a live node does not start, and says why', async () => {
    const url = await createTestDatabase();
    await node(url, 'node-a');
    const config = ConfigSchema.parse(testConfig({ storage: { engine: 'postgres', url }, cluster: { node_id: 'node-a', lease_seconds: 1 } }));
    const second: Parley = await createParley({ config, testMode: true, logger: createLogger('silent') });
    closers.push(() => second.stop());
    const startedAt = Date.now();
    await expect(second.start()).rejects.toThrow(
      'cluster.node_id "node-a" is held by another live node (are two processes configured with the same cluster.node_id?)',
    );
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000); // it waited a whole lease for the id to come free
  });
});

describe('the cluster on LMDB', () => {
  it('is this one process: /ready lists it alone, by its configured id, or a generated one', async () => {
    // The engine named: this file chooses its engines itself, whatever the run's (PARLEY_TEST_ENGINE).
    const named = await startParley({ config: { storage: { engine: 'lmdb' }, cluster: { node_id: 'solo' } } });
    closers.push(() => named.close());
    const { status, body } = await ready(named);
    expect(status).toBe(200);
    expect(body.cluster).toMatchObject({ nodeId: 'solo', status: 'member', leaseSeconds: 5 });
    expect(body.cluster.nodes).toHaveLength(1);
    expect(body.cluster.nodes[0]).toMatchObject({ nodeId: 'solo', self: true, alive: true, sdk: { connections: 0, functions: 0 } });

    const unnamed = await startParley({ config: { storage: { engine: 'lmdb' } } });
    closers.push(() => unnamed.close());
    expect((await ready(unnamed)).body.cluster.nodeId).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*-[0-9a-f]{6}$/);
  });
});

describe('cluster configuration', () => {
  it('lease_seconds defaults to 5; node_id is optional (empty means unset); bad values name the key', () => {
    expect(ConfigSchema.parse({}).cluster).toEqual({ lease_seconds: 5 });
    expect(ConfigSchema.parse({ cluster: { node_id: '', lease_seconds: '2' } }).cluster).toEqual({ lease_seconds: 2 });
    const refused = (cluster: unknown) => ConfigSchema.safeParse({ cluster }).error?.issues.map((i) => i.path.join('.'));
    expect(refused({ node_id: 'has space' })).toEqual(['cluster.node_id']);
    expect(refused({ node_id: 'a.2' })).toEqual(['cluster.node_id']); // the rejoin suffix is Parley's
    expect(refused({ lease_seconds: 0.5 })).toEqual(['cluster.lease_seconds']);
    expect(refused({ leases: 3 })).toEqual(['cluster']);
  });
});
