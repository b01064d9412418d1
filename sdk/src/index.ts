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
  type HandoffHandler,
  type CustomerMessageHandler,
} from './client.ts';
export { ParleyApiError, type Conversations } from './conversations.ts';
export { withReceipt, type Localized, type SummaryFunction } from './localized.ts';
export { backoffDelay, type BackoffOptions } from './backoff.ts';
export { ParleyMediaError, type DownloadedMedia, type DownloadMediaOptions } from './media.ts';
export type { JsonSchema, Parameters } from './schema.ts';
export * as protocol from './protocol.ts';
export { signIdentity, type IdentityFields, type SignIdentityOptions } from './identity.ts';
export { signWebhook, verifyWebhook, WebhookVerificationError, SIGNATURE_HEADER, type VerifyWebhookOptions } from './webhook-signature.ts';
export {
  WEBHOOK_EVENT_TYPES,
  OPT_IN_WEBHOOK_EVENT_TYPES,
  type AgentAuthor,
  type ConversationList,
  type ConversationMessage,
  type ConversationView,
  type CustomerMessageNotice,
  type HandoffNotice,
  type WebhookEvent,
  type WebhookEventType,
} from './agent-api.ts';
