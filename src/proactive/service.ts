// Runs each send request through the `proactive` machine (run-machine.ts): reads
// the customer and hands the facts in as input, provides the atomic guardrail
// reservation (ledger) and the after-commit delivery.
// Also the request schemas for the routes.
import { z } from 'zod';
import { type ProactiveCustomerFacts, type ProactiveDeliverInput, type ProactiveRequest, type ProactiveResult } from '../../machines/proactive.ts';
import type { Clock } from '../clock.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import type { Store, StoreRepos } from '../store/repos.ts';
import type { NewEvent } from '../services.ts';
import type { ProactiveLedger } from './ledger.ts';
import { RequestEffects, type RequestEffectsDeps } from './request-effects.ts';
import { createProactiveRunner } from './run-machine.ts';

export const ProactiveTemplateSchema = z.object({
  name: z.string().min(1).max(512),
  language: z.string().min(1).max(64),
  parameters: z.array(z.string().max(4096)).max(100).optional(),
});

export const ProactiveRequestSchema = z.object({
  customerExternalId: z.string().min(1).max(256),
  channel: z.enum(['web', 'whatsapp']),
  content: z.string().min(1).max(4096),
  dedupKey: z.string().min(1).max(256).optional(),
  template: ProactiveTemplateSchema.optional(),
});

export const OptInRequestSchema = z.object({
  customerExternalId: z.string().min(1).max(256),
  optIn: z.boolean(),
});

export type ProactiveDeliverArgs = ProactiveDeliverInput;

export interface ProactiveServiceOptions {
  store: Store;
  clock: Clock;
  customers: CustomerRepo;
  ledger: ProactiveLedger;
  /** Read on every request, so a config reload takes effect at once. */
  enabled: () => boolean;
  /**
   * Delivery in two steps. `prepare` runs inside the reservation's transaction and writes the
   * message durably (web: history; whatsapp: an outbound job), so a reservation never exists without
   * its message; throwing there aborts the reservation. It returns what to do once committed
   * (push to open widgets, wake the queue), which the `sending` state runs.
   */
  deliver: {
    prepare(tx: StoreRepos, args: ProactiveDeliverArgs): Promise<() => void>;
    /** Whether the WhatsApp channel is enabled; a customer has no usable WhatsApp address when it is not. Default: yes. */
    whatsappEnabled?(): boolean;
  };
  telemetry?: { event(e: NewEvent): void };
  /** Logs an after-commit delivery that threw (the message is stored; only the live push failed). */
  onDeliverError?(err: unknown, messageId: string): void;
}

/**
 * An internal failure (the customer read or the guardrail transaction failed): not one of the
 * seven reasons, so the route answers 503 `unavailable` rather than an invented reason.
 */
export class ProactiveUnavailableError extends Error {
  override name = 'ProactiveUnavailableError';
}

export interface ProactiveService {
  /** Accepted, or blocked with one of the seven reasons; rejects with ProactiveUnavailableError on an internal failure. */
  send(request: ProactiveRequest): Promise<ProactiveResult>;
  /** Returns the opt-in record, or undefined when no customer has this externalId. */
  setOptIn(externalId: string, optIn: boolean): Promise<{ customerExternalId: string; optIn: boolean } | undefined>;
}

export function createProactiveService(options: ProactiveServiceOptions): ProactiveService {
  const { customers, ledger, telemetry } = options;

  const unavailable = (request: ProactiveRequest, customerId: string | undefined, message: string) => {
    telemetry?.event({
      type: 'proactive.failed',
      customerId,
      customerExternalId: request.customerExternalId,
      channel: request.channel,
      data: { channel: request.channel, dedupKey: request.dedupKey, error: message },
    });
    return new ProactiveUnavailableError(message);
  };

  const runner = createProactiveRunner();
  const effectsDeps: RequestEffectsDeps = {
    ledger,
    prepare: (tx, args) => options.deliver.prepare(tx, args),
    onDeliverError: (err, messageId) => options.onDeliverError?.(err, messageId),
  };

  const lookup = async (externalId: string): Promise<ProactiveCustomerFacts | undefined> => {
    const c = await customers.findBy('ext', externalId);
    if (!c) return undefined;
    return {
      customerId: c.customerId,
      externalId: c.externalId,
      email: c.email,
      phone: c.phone,
      bsuid: c.bsuid,
      optIn: c.optIn,
      lastInboundAt: c.lastInboundAt,
    };
  };

  return {
    async send(request) {
      const enabled = options.enabled();
      let customer: ProactiveCustomerFacts | undefined;
      try {
        customer = enabled ? await lookup(request.customerExternalId) : undefined;
      } catch (err) {
        throw unavailable(request, undefined, `Customer lookup failed: ${(err as Error).message}`);
      }
      const whatsappEnabled = options.deliver.whatsappEnabled?.() ?? true;
      const run = await runner.run({ request, enabled, customer, whatsappEnabled }, new RequestEffects(effectsDeps));
      const result = run.output;
      if (run.state === 'failed') throw unavailable(request, customer?.customerId, result.accepted ? 'failed' : result.reason);
      telemetry?.event({
        type: result.accepted ? 'proactive.accepted' : 'proactive.blocked',
        customerId: customer?.customerId,
        customerExternalId: request.customerExternalId,
        channel: request.channel,
        data: {
          channel: request.channel,
          dedupKey: request.dedupKey,
          template: request.template?.name,
          ...(result.accepted ? { messageId: result.messageId } : { reason: result.reason }),
        },
      });
      return result;
    },

    async setOptIn(externalId, optIn) {
      const c = await customers.setOptIn(externalId, optIn);
      return c ? { customerExternalId: c.externalId, optIn: c.optIn === true } : undefined;
    },
  };
}
