// One actor per SDK WebSocket. Pure: the socket, the catalog and the clock are
// injected by the runtime (src/runtime/supervisor.ts) through `provide`.
//
//   open ──register (valid, within 15 s)──▶ registered ──socket.closed──▶ closed (final)
//   open ──after 15 s──▶ closed (closeSocket 4008)
//   open ──socket.closed──▶ closed
import { assign, setup } from 'xstate';

export const SDK_REGISTER_TIMEOUT_MS = 15_000;
export const SDK_REGISTER_TIMEOUT_CODE = 4008;

/** What a `register` frame declares (mirrors `FunctionDeclaration` in sdk/src/protocol.ts; machines import nothing from src/ or sdk/). */
export interface SdkFunctionDeclaration {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  mode: 'read' | 'write' | 'destructive';
  /** Offered to visitors' turns too (never a write or destructive one). */
  visitors?: boolean;
  /** The confirmation summary per locale (templates), and whether the backend words it itself. */
  summary?: Record<string, string>;
  summarizes?: boolean;
}

export interface SdkInfo {
  name: string;
  version: string;
}

export interface SdkConnectionInput {
  connectionId: string;
  connectedAt: number;
}

export interface SdkConnectionContext {
  connectionId: string;
  connectedAt: number;
  functions: SdkFunctionDeclaration[];
  sdk: SdkInfo | null;
  sendProvider: boolean;
  registeredAt: number | null;
}

export type SdkConnectionEvent =
  { type: 'register'; functions: SdkFunctionDeclaration[]; sdk: SdkInfo; sendProvider: boolean; at: number } | { type: 'socket.closed'; code?: number };

/** Parameters the runtime's injected actions receive. */
export interface SdkConnectionEffects {
  replyRegistered: { connectionId: string; functions: number };
  publishCatalog: { connectionId: string; functions: SdkFunctionDeclaration[]; sendProvider: boolean; sdk: SdkInfo | null };
  unpublishCatalog: { connectionId: string };
  closeSocket: { connectionId: string; code: number; reason: string };
  rejectRegister: { connectionId: string; reason: string };
}

/** A registration is valid when every function name is declared once. */
export function registrationProblem(functions: SdkFunctionDeclaration[]): string | undefined {
  const seen = new Set<string>();
  for (const f of functions) {
    if (seen.has(f.name)) return `function "${f.name}" is declared twice`;
    seen.add(f.name);
  }
  return undefined;
}

export const sdkConnectionMachine = setup({
  types: {
    context: {} as SdkConnectionContext,
    events: {} as SdkConnectionEvent,
    input: {} as SdkConnectionInput,
  },
  actions: {
    replyRegistered: (_, _params: SdkConnectionEffects['replyRegistered']) => {},
    publishCatalog: (_, _params: SdkConnectionEffects['publishCatalog']) => {},
    unpublishCatalog: (_, _params: SdkConnectionEffects['unpublishCatalog']) => {},
    closeSocket: (_, _params: SdkConnectionEffects['closeSocket']) => {},
    rejectRegister: (_, _params: SdkConnectionEffects['rejectRegister']) => {},
    storeRegistration: assign(({ event }) => {
      if (event.type !== 'register') return {};
      return { functions: event.functions, sdk: event.sdk, sendProvider: event.sendProvider, registeredAt: event.at };
    }),
  },
  guards: {
    validRegistration: ({ event }) => event.type === 'register' && registrationProblem(event.functions) === undefined,
  },
  delays: {
    registerTimeout: SDK_REGISTER_TIMEOUT_MS,
  },
}).createMachine({
  id: 'sdkConnection',
  context: ({ input }) => ({
    connectionId: input.connectionId,
    connectedAt: input.connectedAt,
    functions: [],
    sdk: null,
    sendProvider: false,
    registeredAt: null,
  }),
  initial: 'open',
  states: {
    open: {
      after: {
        registerTimeout: {
          target: 'closed',
          actions: {
            type: 'closeSocket',
            params: ({ context }) => ({ connectionId: context.connectionId, code: SDK_REGISTER_TIMEOUT_CODE, reason: 'register timeout' }),
          },
        },
      },
      on: {
        register: [
          { guard: 'validRegistration', target: 'registered', actions: 'storeRegistration' },
          {
            actions: {
              type: 'rejectRegister',
              params: ({ context, event }) => ({ connectionId: context.connectionId, reason: registrationProblem(event.functions) ?? 'invalid registration' }),
            },
          },
        ],
        'socket.closed': { target: 'closed', actions: { type: 'unpublishCatalog', params: ({ context }) => ({ connectionId: context.connectionId }) } },
      },
    },
    registered: {
      entry: [
        {
          type: 'publishCatalog',
          params: ({ context }) => ({ connectionId: context.connectionId, functions: context.functions, sendProvider: context.sendProvider, sdk: context.sdk }),
        },
        { type: 'replyRegistered', params: ({ context }) => ({ connectionId: context.connectionId, functions: context.functions.length }) },
      ],
      on: {
        // A second register replaces the declared functions (re-entering publishes and replies again).
        register: [
          { guard: 'validRegistration', target: 'registered', reenter: true, actions: 'storeRegistration' },
          {
            actions: {
              type: 'rejectRegister',
              params: ({ context, event }) => ({ connectionId: context.connectionId, reason: registrationProblem(event.functions) ?? 'invalid registration' }),
            },
          },
        ],
        'socket.closed': { target: 'closed', actions: { type: 'unpublishCatalog', params: ({ context }) => ({ connectionId: context.connectionId }) } },
      },
    },
    closed: { type: 'final' },
  },
});

export type SdkConnectionMachine = typeof sdkConnectionMachine;
