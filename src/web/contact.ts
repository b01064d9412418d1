// The widget's `contact` frame (issue 35): the email address a customer waiting for a person leaves for a reply,
// stored with the customer (CustomerStore.setContact: their own claim, never an identity) and confirmed to every open
// widget of theirs (`contact_saved`, so another tab's form closes too).
import { z } from 'zod';
import type { WidgetContactFrame } from '../../sdk/src/widget-protocol.ts';
import type { WebSessions } from './sessions.ts';
import type { StoreRepos } from '../store/repos.ts';

const Email = z.email();

/** `internal`: the signed-in customer's record is gone (it never is while its socket is open). */
export type ContactOutcome = { ok: true } | { ok: false; code: 'invalid_email' | 'internal'; message: string };

export async function saveContact(
  o: { store: Pick<StoreRepos, 'customers'>; sessions: Pick<WebSessions, 'push'>; now: () => number },
  customerId: string,
  frame: WidgetContactFrame,
): Promise<ContactOutcome> {
  const email = frame.email.trim();
  if (!Email.safeParse(email).success) return { ok: false, code: 'invalid_email', message: 'This is not an email address' };
  if (!(await o.store.customers.setContact(customerId, { email, at: o.now() }))) return { ok: false, code: 'internal', message: 'No such customer' };
  o.sessions.push(customerId, { type: 'contact_saved', id: frame.id, email });
  return { ok: true };
}
