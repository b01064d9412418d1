// Every error code Parley answers with, declared once (fastify's lib/errors.js is the model): the HTTP API's codes with
// their status, and the codes of `error` frames on the widget and SDK sockets. The server raises errors only by these
// names; clients (the SDK, the widget) may switch on them. docs/errors.md lists them, and a test keeps it whole.

/** HTTP errors: the body is `{ error: { code, message } }` with this status. `message` is the default text. */
export const HTTP_ERRORS = {
  bad_request: { status: 400, message: 'The request is not valid' },
  validation_failed: { status: 400, message: 'A field of the request is missing or not valid' },
  unauthorized: { status: 401, message: 'Missing or invalid credentials' },
  invalid_token: { status: 401, message: 'This token is invalid, already used, or expired' },
  invalid_signature: { status: 401, message: 'Missing or invalid signature' },
  sign_in_failed: { status: 401, message: 'Wrong email or password' },
  forbidden: { status: 403, message: 'Not allowed' },
  forbidden_origin: { status: 403, message: 'This origin may not open the widget' },
  csrf_failed: { status: 403, message: 'A request made with the session cookie must send its CSRF token in X-CSRF-Token' },
  not_found: { status: 404, message: 'Not found' },
  conversation_not_found: { status: 404, message: 'No conversation with this id' },
  unknown_customer: { status: 404, message: 'Unknown customer' },
  key_not_found: { status: 404, message: 'No API key with this id' },
  agent_not_found: { status: 404, message: 'No active agent with this id' },
  saved_reply_not_found: { status: 404, message: 'No saved reply with this id' },
  link_unknown: { status: 404, message: 'This link is not known' },
  media_not_found: { status: 404, message: 'No such media' },
  media_unavailable: { status: 404, message: 'Media download is not available here' },
  method_not_allowed: { status: 405, message: 'Method not allowed' },
  not_acceptable: { status: 406, message: 'Not acceptable' },
  timeout: { status: 408, message: 'The request took too long' },
  // A slow client's request (headers or body) that had not arrived within server.request_timeout_ms: documented since
  // the slow-client bound came in, so clients may match on it.
  request_timeout: { status: 408, message: 'The request did not arrive in time (server.request_timeout_ms)' },
  conflict: { status: 409, message: 'This conflicts with what is stored' },
  email_taken: { status: 409, message: 'Another account has this email' },
  not_handed_off: { status: 409, message: 'A person does not have this conversation' },
  claimed_by_other: { status: 409, message: 'Another agent has this conversation' },
  shortcut_taken: { status: 409, message: 'Another saved reply has this shortcut' },
  link_used: { status: 410, message: 'This link was already used' },
  link_expired: { status: 410, message: 'This link has expired' },
  payload_too_large: { status: 413, message: 'The body is too large' },
  uri_too_long: { status: 414, message: 'A part of the URL is too long' },
  unsupported_media_type: { status: 415, message: 'Unsupported content type' },
  outside_window: { status: 422, message: "Outside WhatsApp's 24-hour customer service window: only a template may be sent" },
  upgrade_required: { status: 426, message: 'This is a WebSocket endpoint: connect with a WebSocket upgrade' },
  rate_limited: { status: 429, message: 'Too many requests; try again later' },
  headers_too_large: { status: 431, message: 'The request headers (with the URL) are too large' },
  internal: { status: 500, message: 'Internal error' },
  upstream_error: { status: 502, message: 'An upstream service failed' },
  unavailable: { status: 503, message: 'Parley cannot do this right now; retry later' },
  not_ready: { status: 503, message: 'Not ready' },
  too_many_connections: { status: 503, message: 'All connection slots are in use; retry later' },
  upstream_timeout: { status: 504, message: 'An upstream service did not answer in time' },
} as const satisfies Record<string, { status: number; message: string }>;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** Codes of `error` frames on the widget socket (`/widget/ws`). `id` names the refused customer message, if any. */
export const WIDGET_FRAME_ERRORS = {
  bad_frame: 'The frame is not valid (not UTF-8 text, not JSON, too deep, or not a known frame)',
  too_long: 'The message is longer than the widget allows',
  init_timeout: 'No init frame came in time',
  already_initialized: 'init was already accepted on this connection',
  not_initialized: 'Send init first',
  unauthorized: 'The sign-in was not accepted',
  rate_limited: 'Too many messages; retryAfterMs says when to send again',
  unavailable: 'Parley cannot store this now; send it again',
  unknown_confirmation: 'Nothing is waiting for this confirmation',
  not_enabled: 'This feature is not turned on here',
  nothing_to_rate: 'This conversation has no answer to rate yet (or ratings are off)',
  invalid_email: "The contact frame's email is not an email address (the frame's id is named)",
  already_with_person: 'A person already has this conversation (a handoff frame changes nothing)',
  no_conversation: 'This customer has no conversation to hand over yet',
  internal: 'Something went wrong',
} as const;

export type WidgetFrameErrorCode = keyof typeof WIDGET_FRAME_ERRORS;

/** Codes of `error` frames on the SDK socket (`/sdk`). */
export const SDK_FRAME_ERRORS = {
  bad_frame: 'The frame is not valid',
  bad_register: 'The registration was refused',
  not_open: 'This connection can no longer register',
} as const;

export type SdkFrameErrorCode = keyof typeof SDK_FRAME_ERRORS;
