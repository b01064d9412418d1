// Test mode's WhatsApp sender: records every message instead of calling Meta.
import type { Clock } from '../clock.ts';
import { renderText, type OutboundWhatsApp, type WhatsAppSender } from './outbound.ts';

export interface OutboxEntry {
  id: string;
  to: string;
  type: OutboundWhatsApp['kind'];
  text: string;
  sentAt: number;
}

export interface Outbox {
  record(message: OutboundWhatsApp, id: string): OutboxEntry;
  list(): OutboxEntry[];
  clear(): void;
}

export function createOutbox(clock: Clock, max = 10_000): Outbox {
  let entries: OutboxEntry[] = [];
  return {
    record(m, id) {
      const entry = { id, to: m.to, type: m.kind, text: renderText(m), sentAt: clock.now() };
      entries.push(entry);
      if (entries.length > max) entries = entries.slice(-max);
      return entry;
    },
    list: () => [...entries],
    clear: () => void (entries = []),
  };
}

export function createMockSender(outbox: Outbox): WhatsAppSender {
  let n = 0;
  return {
    name: 'mock',
    async send(m) {
      const id = `wamid.mock.${++n}.${Date.now().toString(36)}`;
      outbox.record(m, id);
      return { ok: true, providerMessageId: id };
    },
  };
}
