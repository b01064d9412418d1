// The durable proactive baseline (bench/proactive.ts): a plain fastify route that
// makes the same store calls as Parley's `POST /proactive` for a web send, with
// no machine, no auth, no schema, no telemetry: the customer by externalId, the
// guardrails' read-only pre-check (dedup key, sends in the cap window, the stored
// customer), and for a send that passes, the same single write transaction (lock
// the customer, re-check dedup and cap, record the send, lock the web
// conversation, append the message to its history). It runs on a store of its
// own on the bench's engine, opened through the store interface, so each read
// and the transaction are the same statements (PostgreSQL) or the same LMDB
// transaction as Parley's; what differs is everything around them.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { conversationIdFor } from '../src/conversations/history.ts';
import type { Store, StoreRepos } from '../src/store/repos.ts';

const HOUR_MS = 3_600_000;
const CAP_WINDOW_MS = 24 * HOUR_MS;

interface Body {
  customerExternalId: string;
  channel: 'web';
  content: string;
  dedupKey?: string;
}

export async function startDurableProactiveRoute(store: Store, o: { dailyCap: number; dedupWindowHours: number }) {
  const dedupWindowMs = o.dedupWindowHours * HOUR_MS;
  const blocked = (reason: string) => ({ accepted: false, reason });
  /** Dedup then cap, as Parley's ledger checks them; the reason that blocks, or undefined. */
  const check = async (repos: StoreRepos, customerId: string, dedupKey: string | undefined, now: number) => {
    if (dedupKey !== undefined) {
      const sentAt = await repos.proactive.dedupSentAt(customerId, dedupKey);
      if (sentAt !== undefined && now - sentAt < dedupWindowMs) return 'Duplicate (dedupKey already sent)';
    }
    if ((await repos.proactive.countSentAfter(customerId, now - CAP_WINDOW_MS)) >= o.dailyCap) return 'Daily proactive limit reached';
    return undefined;
  };
  const app = Fastify({ logger: false });
  app.post('/proactive', async (request) => {
    const body = request.body as Body;
    const customer = await store.customers.findBy('ext', body.customerExternalId);
    if (!customer) return blocked('Unknown customer');
    if (customer.optIn !== true) return blocked('Customer has not opted in');
    const { customerId } = customer;
    await store.customers.get(customerId); // Parley's ledger reads the stored customer for its pre-check
    const early = await check(store, customerId, body.dedupKey, Date.now());
    if (early) return blocked(early);
    return store.transaction(async (tx) => {
      await tx.customers.lock(customerId);
      const now = Date.now();
      const failed = await check(tx, customerId, body.dedupKey, now);
      if (failed) return blocked(failed);
      const messageId = `pm_${randomUUID()}`;
      await tx.proactive.recordSend({ customerId, messageId, at: now, channel: 'web', dedupKey: body.dedupKey });
      const conversationId = conversationIdFor(customerId, 'web');
      await tx.conversations.lock(conversationId);
      await tx.history.append({ id: messageId, conversationId, role: 'assistant', text: body.content, at: now, proactive: true });
      return { accepted: true, messageId };
    });
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, close: () => app.close() };
}
