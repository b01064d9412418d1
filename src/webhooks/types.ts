// The records of webhook delivery: a delivery job's payload, one attempt as remembered, and the deliveries view.
import type { WebhookEvent } from '../../sdk/src/agent-api.ts';

export interface WebhookJob {
  /** The endpoint's URL: its secret is read from the config when sending (never stored). */
  url: string;
  event: WebhookEvent;
}

export interface DeliveryAttempt {
  eventId: string;
  type: string;
  url: string;
  attempt: number;
  at: number;
  /** The HTTP status, or why there is none (`timeout`, `circuit_open`, `private_address`, a network error's code). */
  result: number | string;
  outcome: 'delivered' | 'retrying' | 'dead';
  nextAt?: number;
}

export interface DeliveriesView {
  endpoints: { url: string; events: string[] | 'all' }[];
  /** Totals: `delivered` and `failedAttempts` since this process started, `retrying` and `dead` as stored. */
  counts: { delivered: number; failedAttempts: number; retrying: number; dead: number };
  recent: DeliveryAttempt[];
  retrying: { eventId: string; type: string; url: string; attempts: number; nextAt: number; lastError?: string }[];
  dead: { eventId: string; type: string; url: string; attempts: number; failedAt: number; error: string }[];
}
