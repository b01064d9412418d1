// @parley/sdk — connect your backend to Parley. See README.md.
export {
  createClient,
  sdkUrl,
  ParleyConnectionError,
  SDK_NAME,
  SDK_VERSION,
  type ClientEvents,
  type ClientOptions,
  type ExposeOptions,
  type FunctionHandler,
  type IngestMessage,
  type InvocationContext,
  type ListenOptions,
  type OutboundMessage,
  type ParleyClient,
  type SendHandler,
} from './client.ts';
export { backoffDelay, type BackoffOptions } from './backoff.ts';
export { ParleyMediaError, type DownloadedMedia, type DownloadMediaOptions } from './media.ts';
export type { JsonSchema, Parameters } from './schema.ts';
export * as protocol from './protocol.ts';
