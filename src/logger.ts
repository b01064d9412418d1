import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

// Any field with one of these names is replaced before a line is written,
// wherever it sits, so a secret can't leak through a logged object.
const REDACT = [
  'secret', 'token', 'authToken', 'sessionToken', 'api_key', 'apiKey', 'app_secret', 'verify_token',
  'authorization', 'password',
  '*.secret', '*.token', '*.authToken', '*.sessionToken', '*.api_key', '*.apiKey', '*.app_secret', '*.verify_token',
  '*.authorization', '*.password',
  'req.headers.authorization', 'req.headers["x-service-secret"]', 'req.headers["x-hub-signature-256"]',
  'headers.authorization', 'headers["x-service-secret"]',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { service: 'parley' },
    },
    destination,
  );
}
