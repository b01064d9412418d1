// Visitors (`identity.visitors`): widget users who have not signed in. Each is a customer of its own (externalId
// `visitor:<uuid>`, customerId `vis_<uuid>`) that the widget comes back to with its visitor token. When the visitor
// signs in, their web conversation joins the customer's: its records move to the end of the customer's history in
// one transaction that locks both conversations, so it happens once however many tabs or nodes sign in at once.
import { randomUUID } from 'node:crypto';
import { conversationIdFor } from '../conversations/history.ts';
import type { Customer, CustomerRepo } from '../customers/repo.ts';
import { isVisitorCustomerId, isVisitorExternalId, VISITOR_ID_PREFIX, VISITOR_PREFIX } from '../store/model.ts';
import type { Store } from '../store/repos.ts';

export interface Visitors {
  create(): Promise<Customer>;
  /** The visitor with this customerId, if it is one. */
  find(customerId: string): Promise<Customer | undefined>;
  /** Moves the visitor's web conversation into the customer's; resolves with how many records moved (0 the second time). */
  merge(visitorId: string, customerId: string): Promise<number>;
}

export function createVisitors(o: { store: Store; customers: CustomerRepo }): Visitors {
  return {
    create() {
      const id = randomUUID();
      return o.customers.upsert({ externalId: `${VISITOR_PREFIX}${id}`, customerId: `${VISITOR_ID_PREFIX}${id}` });
    },
    async find(customerId) {
      if (!isVisitorCustomerId(customerId)) return undefined;
      const c = await o.customers.get(customerId);
      return c && isVisitorExternalId(c.externalId) ? c : undefined;
    },
    merge(visitorId, customerId) {
      if (!isVisitorCustomerId(visitorId) || visitorId === customerId) return Promise.resolve(0);
      const from = conversationIdFor(visitorId, 'web');
      const into = conversationIdFor(customerId, 'web');
      return o.store.transaction(async (tx) => {
        // Always the visitor's first: two sign-ins of different visitors into one customer never wait on each other in a cycle.
        await tx.conversations.lock(from);
        await tx.conversations.lock(into);
        return tx.history.move(from, into);
      });
    },
  };
}
