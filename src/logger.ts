import { pino, type Logger, type DestinationStream } from 'pino';
import { createScrubber, type Scrubber } from './log-scrub.ts';

export type { Logger };

/** The scrubber of a logger made by `createLogger` (shared by its children): `addLogSecrets` feeds it. */
const SCRUBBER = Symbol('parley.logScrubber');

const CENSOR = '[redacted]';

// Any field with one of these names is replaced before a line is written, at the top of the logged
// object or one level down, so a secret can't leak through a logged object.
const SECRET_KEYS = ['secret', 'token', 'authToken', 'sessionToken', 'api_key', 'apiKey', 'app_secret', 'verify_token', 'authorization', 'password'];
const HEADER_PATHS = [
  'req.headers.authorization',
  'req.headers["x-service-secret"]',
  'req.headers["x-hub-signature-256"]',
  'headers.authorization',
  'headers["x-service-secret"]',
];

/**
 * One level down (what `*.secret` paths would do), done here rather than with wildcard redact paths:
 * pino runs a wildcard path on every child logger's bindings too, and fastify makes a child per request
 * (~4 KB of garbage and ~2 µs each). This runs only when a line is written; bindings hold no secrets.
 */
function redactNested(obj: Record<string, unknown>): Record<string, unknown> {
  let out = obj;
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    const hits = SECRET_KEYS.filter((k) => Object.hasOwn(value, k));
    if (hits.length === 0) continue;
    // A copy, so the caller's object is untouched; an instance keeps its prototype (serializers check it).
    const copy = Object.create(Object.getPrototypeOf(value), Object.getOwnPropertyDescriptors(value));
    for (const k of hits) Object.defineProperty(copy, k, { value: CENSOR, enumerable: true, writable: true, configurable: true });
    if (out === obj) out = { ...obj };
    out[key] = copy;
  }
  return out;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const scrubber = createScrubber();
  const logger = pino(
    {
      level,
      redact: { paths: [...SECRET_KEYS, ...HEADER_PATHS], censor: CENSOR },
      formatters: { log: redactNested },
      // Every line, whoever wrote it: configured secrets scrubbed by value, over-long lines cut (log-scrub.ts).
      hooks: { streamWrite: scrubber.line },
      base: { service: 'parley' },
    },
    destination,
  );
  return Object.assign(logger, { [SCRUBBER]: scrubber });
}

/** From now on, these values (the configured secrets) are replaced by `[redacted]` in every line of `logger` and its children. */
export function addLogSecrets(logger: Logger, values: Iterable<string | undefined>): void {
  (logger as Logger & { [SCRUBBER]?: Scrubber })[SCRUBBER]?.add(values);
}
