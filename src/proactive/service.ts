// Runs one `proactive` machine actor per send request, with the real facts
// lookup (customer repo), the atomic guardrail reservation (ledger) and the
// delivery the runtime hands in. Also the request schemas for the routes.
import { createActor, fromPromise, toPromise } from 'xstate';
import { z } from 'zod';
import {
  proactiveMachine,
  type ProactiveDeliverInput,
  type ProactiveFacts,
  type ProactiveLookupInput,
  type ProactiveRequest,
  type ProactiveReservation,
  type ProactiveReserveInput,
  type ProactiveResult,
} from '../../machines/proactive.ts';
import { xstateClock, type Clock } from '../clock.ts';
import type { CustomerRepo } from '../customers/repo.ts';
import type { Store } from '../store/types.ts';
import type { NewEvent } from '../telemetry/types.ts';
import type { ProactiveLedger } from './ledger.ts';

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
   * Delivery in two steps. `prepareInTx` runs inside the reservation's transaction and writes the
   * message durably (web: history; whatsapp: an outbound job), so a reservation never exists without
   * its message; throwing there aborts the reservation. It returns what to do once committed
   * (push to open widgets, wake the queue), which the `sending` state runs.
   */
  deliver: {
    prepareInTx(args: ProactiveDeliverArgs): () => void;
  };
  telemetry?: { event(e: NewEvent): void };
}

export interface ProactiveService {
  send(request: ProactiveRequest): Promise<ProactiveResult>;
  /** Returns the opt-in record, or undefined when no customer has this externalId. */
  setOptIn(externalId: string, optIn: boolean): Promise<{ customerExternalId: string; optIn: boolean } | undefined>;
}

export function createProactiveService(options: ProactiveServiceOptions): ProactiveService {
  const { clock, customers, ledger, telemetry } = options;

  // What to run once a reservation (and the message written with it) has committed, by messageId.
  const afterCommit = new Map<string, () => void>();
  const machine = proactiveMachine.provide({
    actors: {
      lookup: fromPromise<ProactiveFacts, ProactiveLookupInput>((args) => lookup(args)),
      reserve: fromPromise<ProactiveReservation, ProactiveReserveInput>(({ input }) => {
        const { customer, request, ...check } = input;
        let prepared: (() => void) | undefined;
        return ledger
          .reserve(check, (messageId) => {
            try {
              prepared = options.deliver.prepareInTx({ messageId, customer, request });
            } catch (err) {
              throw Object.assign(new Error((err as Error).message), { name: 'DeliveryError' });
            }
          })
          .then((r) => {
            if (r.ok && prepared) afterCommit.set(r.messageId, prepared);
            return r;
          });
      }),
      deliver: fromPromise<void, ProactiveDeliverInput>(async ({ input }) => {
        const run = afterCommit.get(input.messageId);
        afterCommit.delete(input.messageId);
        run?.();
      }),
    },
  });

  const lookup = async ({ input }: { input: ProactiveLookupInput }): Promise<ProactiveFacts> => {
    const c = customers.findBy('ext', input.customerExternalId);
    if (!c) return {};
    return {
      customer: {
        customerId: c.customerId,
        externalId: c.externalId,
        email: c.email,
        phone: c.phone,
        optIn: c.optIn,
        lastInboundAt: c.lastInboundAt,
      },
    };
  };

  return {
    async send(request) {
      const actor = createActor(machine, { input: { request, enabled: options.enabled() }, clock: xstateClock(clock) });
      const done = toPromise(actor);
      actor.start();
      const result = await done;
      const snapshot = actor.getSnapshot();
      const type = result.accepted ? 'proactive.accepted' : snapshot.value === 'failed' ? 'proactive.failed' : 'proactive.blocked';
      telemetry?.event({
        type,
        customerId: snapshot.context.customer?.customerId,
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
