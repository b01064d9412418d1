// Every HTTP error body is { error: { code, message } } with the right status.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { isStoreUnavailable } from '../store/errors.ts';
import { HTTP_ERRORS, type HttpErrorCode } from '../../sdk/src/error-codes.ts';

export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: HttpErrorCode,
    message: string = HTTP_ERRORS[code].message,
    readonly headers: Record<string, string> = {},
    /** More fields of the error object (e.g. `retryAfterMs`), beside code and message. */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.status = HTTP_ERRORS[code].status;
  }
}

export const badRequest = (message: string) => new HttpError('bad_request', message);
export const unauthorized = (message?: string) => new HttpError('unauthorized', message);
export const forbidden = (message: string) => new HttpError('forbidden', message);
export const notFound = (message?: string) => new HttpError('not_found', message);

/** Answers with the catalogue's status for `code` (sdk/src/error-codes.ts) and `message` or its default text. */
export function sendError(reply: FastifyReply, code: HttpErrorCode, message: string = HTTP_ERRORS[code].message, details: Record<string, unknown> = {}) {
  return send(reply, HTTP_ERRORS[code].status, code, message, details);
}

function send(reply: FastifyReply, status: number, code: string, message: string, details: Record<string, unknown> = {}) {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({ error: Object.assign({}, details, { code, message }) });
}

/** "body.email: Invalid email; body.externalId: Required" — zod issues named by path. */
export function describeZodError(error: z.ZodError, prefix: string): string {
  return error.issues
    .map((i) => {
      const path = [prefix, ...i.path.map(String)].filter(Boolean).join('.');
      return `${path || prefix}: ${i.message}`;
    })
    .join('; ');
}

/** Parse with a zod schema or throw a 400 naming the failing paths. */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, prefix: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError('validation_failed', describeZodError(r.error, prefix));
  return r.data;
}

/** Fastify's own errors (a 404 route, a 413 body) by their status. */
const CODE_BY_STATUS: Record<number, HttpErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'timeout',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
  503: 'not_ready',
};

export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError | HttpError, request, reply) => {
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      return sendError(reply, err.code, err.message, err.details);
    }
    if (isStoreUnavailable(err)) {
      // Nothing was acknowledged: the caller (Meta, the integrator) retries. Logged by the store's health, not per request.
      return sendError(reply.header('retry-after', '5'), 'unavailable', `Parley cannot store this right now (${err.code}); retry later`);
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err }, 'request failed');
      return send(reply, status, 'internal', HTTP_ERRORS.internal.message);
    }
    const code = CODE_BY_STATUS[status] ?? 'bad_request';
    const message = err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'Body is not valid JSON' : err.message;
    // A status the catalogue names keeps its code; another (414, say) keeps fastify's status with `bad_request`.
    return send(reply, status, code, message);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`));
}

/**
 * Fastify's `frameworkErrors` (a constructor option): what its router refuses before any route or hook runs gets the
 * usual error body, not fastify's own `{error: 'Bad Request', code: 'FST_ERR_…', statusCode}`.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // A path parameter longer than fastify's maxParamLength (100): no id of Parley's is that long.
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') void sendError(reply, 'uri_too_long', 'A path parameter is longer than 100 characters');
  // `%ZZ`, or percent-encoded bytes that are not UTF-8 (`%C0%AE`, an encoded lone surrogate `%ED%A0%80`).
  else if (err.code === 'FST_ERR_BAD_URL') void sendError(reply, 'bad_request', 'The path is not valid percent-encoded UTF-8');
  else {
    request.log.error({ err }, 'request failed');
    void send(reply, 500, 'internal', HTTP_ERRORS.internal.message);
  }
}
