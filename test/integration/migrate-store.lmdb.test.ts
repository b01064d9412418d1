// Issue 16 part 8: `parley migrate-store --from lmdb:<dir> --to postgres://…` moves a real LMDB store (left by a real
// Parley) into an empty PostgreSQL database, with progress; the server started on PostgreSQL carries on from it:
// the conversation's history, the proactive dedup key and daily cap, a WhatsApp reply still queued, telemetry. A
// target that already holds data is refused. Run as the real command (a child process), black-box.
import { spawn } from 'node:child_process';
import { newSignedInAgent, post as postAgents, signIn } from '../support/agents.ts';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startFakeGraph } from '../support/fake-graph.ts';
import { startParley, TEST_SECRET, tempDir, type TestParley } from '../support/parley.ts';
import { createTestDatabase } from '../support/shared-postgres.ts';
import { startWidgetSession } from '../support/widget-client.ts';
import { postWebhook, sleep, textMessage, until, WA, webhookBody } from '../support/whatsapp.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const auth = { authorization: `Bearer ${TEST_SECRET}`, 'content-type': 'application/json' };
const post = async (p: TestParley, path: string, body: unknown) =>
  (await fetch(`${p.url()}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) })).json();

function migrateStore(from: string, to: string): Promise<{ code: number | null; output: string }> {
  const child = trackChild(
    spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'src/main.ts'), 'migrate-store', '--from', from, '--to', to], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

describe('migrate-store: LMDB into PostgreSQL', () => {
  it('conversations, guardrail counters and a queued WhatsApp reply survive the move; the server carries on; a non-empty target is refused', async () => {
    const graph = await startFakeGraph();
    open.push(graph);
    const storagePath = tempDir();
    const config = {
      proactive: { enabled: true, daily_cap: 3 },
      channels: { whatsapp: { enabled: true, provider: 'meta' as const, graph_url: graph.url, ...WA } },
    };
    const lmdb = await startParley({ storagePath, config });
    // A web conversation of two turns.
    const w = await startWidgetSession(lmdb.url(), { customerId: 'mover', email: 'mover@example.com' });
    for (const id of ['m1', 'm2']) {
      w.send({ type: 'message', id, text: `What is the status of order 100${id.slice(1)}?` });
      await w.next((f) => f.type === 'message' && f.role === 'assistant');
    }
    w.close();
    // Two proactive sends: one with a dedup key; the cap (3) leaves one more.
    expect(await post(lmdb, '/proactive/opt-in', { customerExternalId: 'anon:mover', optIn: true })).toMatchObject({ optIn: true });
    expect(
      await post(lmdb, '/proactive', { customerExternalId: 'anon:mover', channel: 'web', content: 'Your order shipped', dedupKey: 'ship-1' }),
    ).toMatchObject({
      accepted: true,
    });
    expect(await post(lmdb, '/proactive', { customerExternalId: 'anon:mover', channel: 'web', content: 'A tip' })).toMatchObject({ accepted: true });
    // An admin with a password, a session and a personal API key (issue 35).
    const person = await newSignedInAgent(lmdb, 'mover-admin@example.com', 'admin');
    const keyMade = await postAgents(lmdb, '/api/v1/agents/me/keys', { name: 'k' }, { cookie: person.cookie, 'x-csrf-token': person.csrf });
    const { key } = (await keyMade.json()) as { key: string };
    // The agent inbox's records: a note and a saved reply (issue 35).
    const inboxHeaders = { cookie: person.cookie, 'x-csrf-token': person.csrf };
    expect((await postAgents(lmdb, '/api/v1/inbox/conversations/conv_web_mover/notes', { text: 'moved note' }, inboxHeaders)).status).toBe(201);
    expect((await postAgents(lmdb, '/api/v1/inbox/saved-replies', { shortcut: 'moved', text: 'moved reply' }, inboxHeaders)).status).toBe(201);
    // A WhatsApp message whose reply cannot be sent yet: Graph answers 503 (retried with a backoff), and the server
    // stops before the retry, so the reply is still queued; the new server meets one more 503, then succeeds.
    graph.failNext({ status: 503 }, { status: 503 });
    expect((await postWebhook(lmdb.url(), webhookBody([textMessage('+15550009999', 'hello from WhatsApp', 'wamid.move.1')]))).status).toBe(200);
    await until(
      () => graph.requests.length,
      (n) => n > 0,
    );
    await lmdb.close();
    expect(graph.delivered()).toHaveLength(0);

    const url = await createTestDatabase();
    const moved = await migrateStore(`lmdb:${storagePath}`, url);
    expect(moved.code, moved.output).toBe(0);
    expect(moved.output).toMatch(/migrate-store: copying .* into postgres:\/\//);
    expect(moved.output).toMatch(/migrate-store: done: .*customer \d+.*conversation \d+.*message \d+/);
    expect(moved.output).toMatch(/job [1-9]/);
    expect(moved.output).not.toContain(new URL(url).password || '\u0000never');

    const pg = await startParley({ config: Object.assign({}, config, { storage: { engine: 'postgres' as const, url } }) });
    open.push(pg);
    // The conversation's outcome came along (issue 39): still open, from its first message.
    const outcome = await (await fetch(`${pg.url()}/conversations/conv_web_mover/outcome`, { headers: auth })).json();
    expect(outcome).toMatchObject({ conversationId: 'conv_web_mover', status: 'open', reopens: 0, firstResponseAt: expect.any(Number) });
    // The person's account, password, session and key came along.
    expect((await signIn(pg, 'mover-admin@example.com')).status).toBe(200);
    expect((await fetch(`${pg.url()}/api/v1/agents/me`, { headers: { cookie: person.cookie } })).status).toBe(200);
    expect((await fetch(`${pg.url()}/api/v1/agents/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    // The inbox's note and saved reply came along.
    expect((await pg.services.store.agentInbox.notes('conv_web_mover')).map((n) => n.text)).toEqual(['moved note']);
    expect((await pg.services.store.agentInbox.savedReplies()).map((r) => r.shortcut)).toEqual(['moved']);
    // The history is there, and the conversation goes on.
    const again = await startWidgetSession(pg.url(), { customerId: 'mover', email: 'mover@example.com' });
    open.push(again);
    const ready = again.frames.find((f) => f.type === 'ready')!;
    expect(ready.history.map((h: { id: string }) => h.id)).toEqual(expect.arrayContaining(['m1', 'conv_web_mover:m1:r', 'm2', 'conv_web_mover:m2:r']));
    expect(ready.history.filter((h: { proactive?: boolean }) => h.proactive)).toHaveLength(2);
    again.send({ type: 'message', id: 'm3', text: 'thanks' });
    await again.next((f) => f.type === 'message' && f.role === 'assistant' && f.id === 'conv_web_mover:m3:r');
    // The dedup key and the daily cap were moved with their times.
    expect(await post(pg, '/proactive', { customerExternalId: 'anon:mover', channel: 'web', content: 'again', dedupKey: 'ship-1' })).toEqual({
      accepted: false,
      reason: 'Duplicate (dedupKey already sent)',
    });
    expect(await post(pg, '/proactive', { customerExternalId: 'anon:mover', channel: 'web', content: 'third' })).toMatchObject({ accepted: true });
    expect(await post(pg, '/proactive', { customerExternalId: 'anon:mover', channel: 'web', content: 'fourth' })).toEqual({
      accepted: false,
      reason: 'Daily proactive limit reached',
    });
    // The queued WhatsApp reply goes out from the new server, once; Meta redelivering the message it answers queues nothing.
    const delivered = await until(
      () => graph.delivered(),
      (d) => d.length > 0,
      20_000,
    );
    expect(delivered[0].body.to).toBe('15550009999');
    const redelivered = await postWebhook(pg.url(), webhookBody([textMessage('+15550009999', 'hello from WhatsApp', 'wamid.move.1')]));
    expect(await redelivered.json()).toMatchObject({ queued: 0 });
    await sleep(500);
    expect(graph.delivered()).toHaveLength(1);
    // Telemetry came along.
    const events = await (await fetch(`${pg.url()}/api/v1/telemetry/events?type=message.in&limit=100`, { headers: auth })).json();
    expect(events.items.length).toBeGreaterThanOrEqual(3);
    await pg.close();
    open.pop();

    // A target that already holds data is refused, and left as it was.
    const refused = await migrateStore(`lmdb:${storagePath}`, url);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/already holds data/);
  }, 120_000);
});
