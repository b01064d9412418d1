// Messages the server has not acknowledged, kept in localStorage per server and customer, so a reload does not lose
// them: they are shown again (not sent yet) and re-sent with their ids (the server stores a client id only once).
import type { Bubble } from './state.ts';

export interface OutboxStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface OutboxEntry {
  id: string;
  text: string;
  at: number;
}

const isEntry = (e: unknown): e is OutboxEntry =>
  !!e &&
  typeof e === 'object' &&
  typeof (e as OutboxEntry).id === 'string' &&
  typeof (e as OutboxEntry).text === 'string' &&
  typeof (e as OutboxEntry).at === 'number';

/** `scope`: the server's URL (two Parleys on one origin keep apart). Storage errors (private mode, full) are ignored. */
export function createOutbox(storage: OutboxStorage | undefined, scope: string) {
  const key = (customerId: string) => `parley:outbox:${scope}:${customerId}`;
  let last = '';
  return {
    load(customerId: string): OutboxEntry[] {
      try {
        const parsed: unknown = JSON.parse(storage?.getItem(key(customerId)) ?? '[]');
        return Array.isArray(parsed) ? parsed.filter(isEntry) : [];
      } catch {
        return [];
      }
    },
    /** Writes the unacknowledged messages (only when they changed). */
    save(customerId: string, unacked: Bubble[]) {
      const value = JSON.stringify(unacked.map((b) => ({ id: b.id, text: b.text, at: b.at })));
      if (value === last) return;
      last = value;
      try {
        if (unacked.length) storage?.setItem(key(customerId), value);
        else storage?.removeItem(key(customerId));
      } catch {
        /* storage unavailable: the messages live as long as the page */
      }
    },
  };
}
