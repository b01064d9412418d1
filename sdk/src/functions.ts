// The functions this SDK exposes to Parley: their declarations (sent in `register`), their calls (`invoke`, answered
// with a `result`; a repeated invoke id while the first run is in flight is answered from that one run) and their
// confirmation summaries (`summarize`).
import { FunctionDeclaration, type ClientFrame, type InvokeFrame, type SummarizeFrame, type SummaryTemplates, type ToolError } from './protocol.ts';
import { prepareParameters, type Parameters, type PreparedParameters } from './schema.ts';
import { errorReceipt, splitResult, summaryDeclaration, type SummaryFunction } from './localized.ts';
import type { ExposeOptions, FunctionHandler, InvocationContext } from './client-types.ts';

/** A thrown value as a tool error: its `message` and `code` (strings) when it has them, bounded in length. */
export function toolError(err: unknown): ToolError {
  const e = err as { message?: unknown; code?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : 'handler_error';
  return { message: message.slice(0, 4000), code: code.slice(0, 128) };
}

interface Exposed {
  declaration: FunctionDeclaration;
  parameters: PreparedParameters;
  handler: (args: unknown, context: InvocationContext) => unknown;
  summarize?: SummaryFunction<unknown>;
}

export interface FunctionRegistry {
  /** Adds a function; throws when the name is taken. */
  expose<P extends Parameters | undefined>(name: string, options: ExposeOptions<P>, handler: FunctionHandler<P>): void;
  declarations(): FunctionDeclaration[];
  onInvoke(frame: InvokeFrame): void;
  onSummarize(frame: SummarizeFrame): Promise<void>;
}

/** `send` writes a frame to the current socket (false when there is none); `report` tells the integrator of a failure. */
export function createFunctionRegistry(send: (frame: ClientFrame) => boolean, report: (err: unknown) => void): FunctionRegistry {
  const functions = new Map<string, Exposed>();
  const inflight = new Map<string, Promise<ClientFrame>>();

  // Returns the result frame directly when the handler is synchronous (no promise hops), a promise otherwise.
  const runInvoke = (frame: InvokeFrame): ClientFrame | Promise<ClientFrame> => {
    const fn = functions.get(frame.name);
    if (!fn) return { type: 'result', id: frame.id, ok: false, error: { code: 'unknown_function', message: `"${frame.name}" is not exposed by this SDK` } };
    const args = fn.parameters.validate(frame.args);
    if (!args.ok) return { type: 'result', id: frame.id, ok: false, error: { code: 'invalid_args', message: args.message.slice(0, 4000) } };
    const locale = frame.context.locale;
    const ok = (out: unknown): ClientFrame => {
      const { data, receipt } = splitResult(out, locale);
      return { type: 'result', id: frame.id, ok: true, data: data === undefined ? null : data, ...(receipt ? { receipt } : {}) };
    };
    const failed = (err: unknown): ClientFrame => {
      const receipt = errorReceipt(err, locale);
      return { type: 'result', id: frame.id, ok: false, error: toolError(err), ...(receipt ? { receipt } : {}) };
    };
    try {
      const out = fn.handler(args.value, invocationContext(frame));
      if (out && typeof (out as PromiseLike<unknown>).then === 'function') return Promise.resolve(out).then(ok, failed);
      return ok(out);
    } catch (err) {
      return failed(err);
    }
  };

  const reply = (frame: InvokeFrame, result: ClientFrame) => {
    try {
      send(result);
    } catch (err) {
      send({ type: 'result', id: frame.id, ok: false, error: { code: 'unserializable_result', message: String((err as Error).message) } });
    }
  };

  return {
    expose(name, opts, handler) {
      if (functions.has(name)) throw new Error(`"${name}" is already exposed`);
      const parameters = prepareParameters(opts.parameters);
      const declaration = FunctionDeclaration.parse({
        name,
        description: opts.description ?? '',
        parameters: parameters.jsonSchema,
        mode: opts.mode ?? 'read',
        visitors: opts.visitors ?? false,
        ...summaryDeclaration(opts.summary as SummaryTemplates | SummaryFunction<never> | undefined),
      });
      const summarize = typeof opts.summary === 'function' ? (opts.summary as SummaryFunction<unknown>) : undefined;
      functions.set(name, { declaration, parameters, handler: handler as Exposed['handler'], summarize });
    },

    declarations: () => [...functions.values()].map((f) => f.declaration),

    onInvoke(frame) {
      // The same invoke id again (a retry) while the first run is in flight: answer both from one run.
      const running = inflight.get(frame.id);
      if (running) return void running.then((result) => reply(frame, result));
      const result = runInvoke(frame);
      if (!(result instanceof Promise)) return reply(frame, result);
      inflight.set(frame.id, result);
      void result.then((r) => {
        inflight.delete(frame.id);
        reply(frame, r);
      });
    },

    /** Parley asks a `summarizes` function for its confirmation summary: answered with the text, or none (it falls back). */
    async onSummarize(frame) {
      const fn = functions.get(frame.name);
      const args = fn?.summarize ? fn.parameters.validate(frame.args) : undefined;
      let text: string | undefined;
      try {
        if (fn?.summarize && args?.ok) text = (await fn.summarize(args.value, frame.locale))?.trim().slice(0, 300) || undefined;
      } catch (err) {
        report(err);
      }
      send({ type: 'summary', id: frame.id, ...(text ? { text } : {}) });
    },
  };
}

function invocationContext(frame: InvokeFrame): InvocationContext {
  return {
    invocationId: frame.id,
    customerId: frame.context.customerId,
    channel: frame.context.channel,
    conversationId: frame.context.conversationId,
    verified: frame.context.verified,
    ...(frame.context.externalId !== undefined ? { externalId: frame.context.externalId } : {}),
    ...(frame.context.locale !== undefined ? { locale: frame.context.locale } : {}),
  };
}
