// What the nodes of a cluster say to each other over the store's bus (issue 17, part 4: the SDK across nodes). One
// zod schema per message, parsed by the receiving end and typing the sending one; nothing else goes on these topics.
import { z } from 'zod';
import { FunctionDeclaration, HandoffFrame, CustomerMessageFrame, InvokeContext, Receipt, ToolError } from '../../sdk/src/protocol.ts';

export const TOPICS = {
  /** Requests and responses between two nodes (node-rpc.ts). */
  rpc: 'node.rpc',
  /** A node's SDK catalog (cluster-catalog.ts). */
  catalog: 'sdk.catalog',
  /** A node that just started (or heard nothing for a while) asks every other one for its catalog. */
  catalogAsk: 'sdk.catalog.ask',
  /** A live notice for every node's SDK connections (human handoff). */
  broadcast: 'sdk.broadcast',
} as const;

const nodeId = z.string().min(1).max(128);
/** Random per process start: tells a node's own messages (the bus delivers to the sender too) and a rejoin apart. */
const instance = z.string().min(1).max(64);

// ---- node-rpc ----------------------------------------------------------------------------------------------------

export const RpcErrorCode = z.enum([
  /** No answer within the caller's timeout. */
  'timeout',
  /** The target node is not alive (membership), before or during the call. */
  'node_gone',
  /** This node cannot use the bus now (it does not hear it, a publish failed, it is stopping). */
  'unavailable',
  /** The target has no handler for the method, or a body was refused by its schema. */
  'refused',
  /** The target's handler threw. */
  'failed',
]);
export type RpcErrorCode = z.infer<typeof RpcErrorCode>;
export const RpcError = z.object({ code: RpcErrorCode, message: z.string() });
export type RpcError = z.infer<typeof RpcError>;

export const RpcOutcome = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), body: z.unknown() }),
  z.object({ ok: z.literal(false), error: RpcError }),
]);

export const RpcMessage = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('request'), id: z.string(), from: nodeId, to: nodeId, method: z.string(), body: z.unknown() }),
  z.object({ kind: z.literal('response'), id: z.string(), to: nodeId, outcome: RpcOutcome }),
]);
export type RpcMessage = z.infer<typeof RpcMessage>;

/** A method's request and response bodies: the caller parses the response with it, the handler the request. */
export interface RpcMethod<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  request: Req;
  response: Res;
}

export const InvokeRequest = z.object({
  name: z.string(),
  args: z.unknown(),
  context: InvokeContext,
  invocationId: z.string(),
  timeoutMs: z.number().int().positive(),
});
export const InvokeResponse = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), data: z.unknown(), receipt: Receipt.optional() }),
  z.object({ ok: z.literal(false), error: ToolError, receipt: Receipt.optional() }),
]);

export const SendRequest = z.object({
  message: z.object({ id: z.string(), channel: z.enum(['web', 'whatsapp']), to: z.string(), content: z.string() }),
  timeoutMs: z.number().int().positive(),
});
export const SendResponse = z.object({ ok: z.boolean(), messageId: z.string().optional(), error: z.string().optional() });

/** The methods a node answers for the others' SDK calls (cluster-hub.ts). */
export const SDK_METHODS = {
  invoke: { request: InvokeRequest, response: InvokeResponse },
  send: { request: SendRequest, response: SendResponse },
} satisfies Record<string, RpcMethod>;

// ---- the catalog ---------------------------------------------------------------------------------------------------

export const CatalogAnnouncement = z.object({
  nodeId,
  instance,
  /** Grows with every announcement of the instance: a late one (stored payloads can arrive out of order) loses. */
  version: z.number().int().nonnegative(),
  functions: z.array(
    FunctionDeclaration.extend({
      connectionId: z.string(),
      /** When the node saw the registration (its wall clock, ms): the most recent wins across nodes. */
      registeredAt: z.number(),
    }),
  ),
  /** When the node's newest SDK connection with an `onSend` handler registered; null when it has none. */
  sendProvider: z.number().nullable(),
});
export type CatalogAnnouncement = z.infer<typeof CatalogAnnouncement>;

export const CatalogAsk = z.object({ nodeId, instance });

// ---- broadcast -----------------------------------------------------------------------------------------------------

export const BroadcastNotice = z.object({ instance, frame: z.union([HandoffFrame, CustomerMessageFrame]) });
export type BroadcastNotice = z.infer<typeof BroadcastNotice>;
