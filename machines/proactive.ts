// One actor per proactive send request. Pure: the runtime (src/proactive/service.ts)
// hands in the facts it read (the customer record, which channels are enabled) as
// input, and provides the atomic guardrail reservation (an invoked actor) and the
// after-commit delivery (an entry action) through `provide`.
//
//   checkEnabled ─▶ checkCustomer ─▶ checkAddress ─▶ checkOptIn
//     ─▶ checkDuplicate (invokes reserve) ─▶ checkCap ─▶ checkWindow ─▶ sending (entry: deliver) ─▶ accepted
//   any check that fails ─▶ blocked (with its reason); reserve throwing ─▶ failed (an internal error, not a reason)
//
// The customer lookup is a synchronous memory-mapped read and the after-commit step a
// synchronous push, so neither is an actor: one invoked actor per request (reserve).
//
// Duplicate, cap and window must not race with other requests, so one `reserve`
// call decides all three in a single store transaction (and records the send
// when they pass). The three states still exist and are visited in that order;
// `checkCap` and `checkWindow` route on the stored reservation result.
import { assign, fromPromise, setup } from 'xstate';

export const BLOCK_REASONS = {
  disabled: 'Proactive messaging is disabled',
  unknownCustomer: 'Unknown customer',
  noAddress: 'No channel address',
  notOptedIn: 'Customer has not opted in',
  duplicate: 'Duplicate (dedupKey already sent)',
  cap: 'Daily proactive limit reached',
  window: 'Outside 24h window — a template message is required',
} as const;
export type BlockReason = (typeof BLOCK_REASONS)[keyof typeof BLOCK_REASONS];

export type ProactiveChannel = 'web' | 'whatsapp';

export interface ProactiveTemplate {
  name: string;
  language: string;
  parameters?: string[];
}

export interface ProactiveRequest {
  customerExternalId: string;
  channel: ProactiveChannel;
  content: string;
  dedupKey?: string;
  template?: ProactiveTemplate;
}

export type ProactiveResult = { accepted: true; messageId: string } | { accepted: false; reason: string };

/** What the machine needs to know about the customer (mirrors `Customer` in src/customers/repo.ts). */
export interface ProactiveCustomerFacts {
  customerId: string;
  externalId: string;
  email?: string;
  phone?: string;
  /** WhatsApp business-scoped user id: an address on its own for a user Meta names without a phone. */
  bsuid?: string;
  optIn?: boolean;
  lastInboundAt?: { web?: number; whatsapp?: number };
}

export interface ProactiveReserveInput {
  customerId: string;
  channel: ProactiveChannel;
  dedupKey?: string;
  hasTemplate: boolean;
  lastInboundAt?: { web?: number; whatsapp?: number };
  /** What the reservation's transaction also writes: the message itself. */
  customer: ProactiveCustomerFacts;
  request: ProactiveRequest;
}
export type ProactiveReservation = { ok: true; messageId: string } | { ok: false; failed: 'duplicate' | 'cap' | 'window' };

export interface ProactiveDeliverInput {
  messageId: string;
  customer: ProactiveCustomerFacts;
  request: ProactiveRequest;
}

export interface ProactiveInput {
  request: ProactiveRequest;
  enabled: boolean;
  /** The customer with this externalId, read by the runtime; undefined when there is none. */
  customer?: ProactiveCustomerFacts;
  /** Whether the WhatsApp channel is enabled (default true): a disabled channel is no usable address. */
  whatsappEnabled?: boolean;
}

export interface ProactiveContext {
  request: ProactiveRequest;
  enabled: boolean;
  whatsappEnabled: boolean;
  customer?: ProactiveCustomerFacts;
  reservation?: ProactiveReservation;
  result?: ProactiveResult;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A web customer is addressable by its customerId; WhatsApp needs a phone or a BSUID, and the channel enabled. */
export function hasChannelAddress(customer: ProactiveCustomerFacts, channel: ProactiveChannel, whatsappEnabled = true): boolean {
  return channel === 'web' ? Boolean(customer.customerId) : whatsappEnabled && Boolean(customer.phone || customer.bsuid);
}

const notProvided = (name: string) => () => Promise.reject(new Error(`proactive machine: actor "${name}" was not provided`));

export const proactiveMachine = setup({
  types: {
    context: {} as ProactiveContext,
    input: {} as ProactiveInput,
    output: {} as ProactiveResult,
  },
  actors: {
    reserve: fromPromise<ProactiveReservation, ProactiveReserveInput>(notProvided('reserve')),
  },
  actions: {
    /** After the reservation (and the message written with it) committed: push it out. Must not throw. */
    deliver: (_, _params: ProactiveDeliverInput) => {},
    block: assign((_, params: { reason: BlockReason }) => ({ result: { accepted: false as const, reason: params.reason } })),
  },
  guards: {
    disabled: ({ context }) => !context.enabled,
    unknownCustomer: ({ context }) => !context.customer,
    noAddress: ({ context }) => !context.customer || !hasChannelAddress(context.customer, context.request.channel, context.whatsappEnabled),
    notOptedIn: ({ context }) => context.customer?.optIn !== true,
    capReached: ({ context }) => context.reservation?.ok === false && context.reservation.failed === 'cap',
    outsideWindow: ({ context }) => context.reservation?.ok === false && context.reservation.failed === 'window',
    reserved: ({ context }) => context.reservation?.ok === true,
  },
}).createMachine({
  id: 'proactive',
  context: ({ input }) => ({ request: input.request, enabled: input.enabled, whatsappEnabled: input.whatsappEnabled ?? true, customer: input.customer }),
  initial: 'checkEnabled',
  output: ({ context }) => context.result ?? { accepted: false, reason: 'Proactive send ended without a result' },
  states: {
    checkEnabled: {
      always: [{ guard: 'disabled', target: 'blocked', actions: { type: 'block', params: { reason: BLOCK_REASONS.disabled } } }, { target: 'checkCustomer' }],
    },
    checkCustomer: {
      always: [
        { guard: 'unknownCustomer', target: 'blocked', actions: { type: 'block', params: { reason: BLOCK_REASONS.unknownCustomer } } },
        { target: 'checkAddress' },
      ],
    },
    checkAddress: {
      always: [{ guard: 'noAddress', target: 'blocked', actions: { type: 'block', params: { reason: BLOCK_REASONS.noAddress } } }, { target: 'checkOptIn' }],
    },
    checkOptIn: {
      always: [
        { guard: 'notOptedIn', target: 'blocked', actions: { type: 'block', params: { reason: BLOCK_REASONS.notOptedIn } } },
        { target: 'checkDuplicate' },
      ],
    },
    checkDuplicate: {
      invoke: {
        src: 'reserve',
        input: ({ context }) => ({
          customerId: context.customer!.customerId,
          channel: context.request.channel,
          dedupKey: context.request.dedupKey,
          hasTemplate: Boolean(context.request.template),
          lastInboundAt: context.customer!.lastInboundAt,
          customer: context.customer!,
          request: context.request,
        }),
        onDone: [
          {
            guard: ({ event }) => event.output.ok === false && event.output.failed === 'duplicate',
            target: 'blocked',
            actions: [assign({ reservation: ({ event }) => event.output }), { type: 'block', params: { reason: BLOCK_REASONS.duplicate } }],
          },
          { target: 'checkCap', actions: assign({ reservation: ({ event }) => event.output }) },
        ],
        onError: {
          target: 'failed',
          actions: assign({
            result: ({ event }) => ({
              accepted: false as const,
              // The delivery is written in the reservation's transaction; its failure aborts both.
              reason:
                (event.error as { name?: string })?.name === 'DeliveryError'
                  ? `Delivery failed: ${errorText(event.error)}`
                  : `Guardrail check failed: ${errorText(event.error)}`,
            }),
          }),
        },
      },
    },
    checkCap: {
      always: [{ guard: 'capReached', target: 'blocked', actions: { type: 'block', params: { reason: BLOCK_REASONS.cap } } }, { target: 'checkWindow' }],
    },
    checkWindow: {
      always: [
        { guard: 'outsideWindow', target: 'blocked', actions: { type: 'block', params: { reason: BLOCK_REASONS.window } } },
        { guard: 'reserved', target: 'sending' },
        {
          target: 'failed',
          actions: assign({ result: () => ({ accepted: false as const, reason: 'Guardrail check failed: no reservation' }) }),
        },
      ],
    },
    sending: {
      entry: {
        type: 'deliver',
        params: ({ context }) => ({
          messageId: (context.reservation as { ok: true; messageId: string }).messageId,
          customer: context.customer!,
          request: context.request,
        }),
      },
      always: {
        target: 'accepted',
        actions: assign({
          result: ({ context }) => ({ accepted: true as const, messageId: (context.reservation as { ok: true; messageId: string }).messageId }),
        }),
      },
    },
    accepted: { type: 'final' },
    blocked: { type: 'final' },
    failed: { type: 'final' },
  },
});
