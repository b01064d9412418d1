// What proactive delivery needs of the channels, as interfaces only: the channels implement them (the web sessions
// in src/web/sessions.ts, the WhatsApp channel in src/whatsapp/channel.ts) and wiring hands them in, so
// the arrows run from the channels to proactive and never back.
import type { StoreRepos } from '../store/repos.ts';

/** The open widgets: a proactive web message is pushed live to every open widget of its customer. */
export interface WebPush {
  /** Sends a frame to every open widget of the customer (here, and relayed to other nodes); returns how many here got it. */
  push(customerId: string, frame: Record<string, unknown>): number;
}

/** The WhatsApp channel's durable outbound queue. */
export interface WhatsAppOutbound {
  /** Inside a transaction: queues a proactive WhatsApp message; returns what to run after the commit. */
  prepareProactive(
    tx: StoreRepos,
    args: {
      messageId: string;
      customerId: string;
      to: string;
      text: string;
      template?: { name: string; language: string; parameters?: string[] };
    },
  ): Promise<() => void>;
}
