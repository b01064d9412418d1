// The one schema for Parley's YAML configuration. Unknown keys are errors
// (strictObject everywhere) so a typo never passes silently.
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../../sdk/src/agent-api.ts';
import { privateLiteral } from './address-policy.ts';
import { maskUrl } from './mask-url.ts';
import { BusinessHoursSchema } from './business-hours-schema.ts';
import { ToolsSchema } from './mcp-schema.ts';

const s = z.strictObject;

/** Meta's Graph API, pinned version. In test mode any other `graph_url` (a local fake) means "really send". */
export const DEFAULT_GRAPH_URL = 'https://graph.facebook.com/v21.0';

// ${ENV} references always resolve to strings; number and boolean keys accept the
// string form ("3000", "true"/"false" — nothing looser) as well as YAML's own types.
const DECIMAL = /^-?\d+(\.\d+)?$/;
const num = <T extends z.ZodNumber>(schema: T) => z.preprocess((v: unknown) => (typeof v === 'string' && DECIMAL.test(v.trim()) ? Number(v) : v), schema);
const bool = <T extends z.ZodBoolean>(schema: T) => z.preprocess((v: unknown) => (v === 'true' ? true : v === 'false' ? false : v), schema);
/** An unset `${ENV}` reference resolves to "": for an optional URL that means "not given". */
const optionalUrl = () => z.preprocess((v: unknown) => (v === '' ? undefined : v), z.string().url().optional());

const httpUrl = () =>
  z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), { message: 'must be an http(s) URL' });

/** Shared secrets: empty means "not set" (generated or derived); anything shorter than this is refused. */
export const MIN_SECRET_LENGTH = 16;
const sharedSecret = (what: string) =>
  z
    .string()
    .refine((v) => v === '' || v.length >= MIN_SECRET_LENGTH, {
      message: `${what} must be at least ${MIN_SECRET_LENGTH} characters (or empty to have one ${what === 'the service secret' ? 'generated' : 'derived'})`,
    })
    .default('');

/** The openai client needs somewhere to go: OpenAI itself (a key), or another endpoint (a base_url; Ollama takes no key). */
const needsKeyOrUrl = (c: { provider: string; base_url?: string; api_key: string }, ctx: z.RefinementCtx) => {
  if (c.provider === 'openai' && !c.base_url && !c.api_key) {
    ctx.addIssue({
      code: 'custom',
      path: ['api_key'],
      message: 'provider "openai" needs api_key (e.g. ${OPENAI_API_KEY}), or a base_url for an OpenAI-compatible endpoint that takes no key',
    });
  }
};

const WebhookEndpoint = s({
  url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), { message: 'must be an http(s) URL' }),
  secret: z.string().min(MIN_SECRET_LENGTH, { message: `a webhook secret must be at least ${MIN_SECRET_LENGTH} characters` }),
  /** Event types to send (default: every one). */
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).optional(),
});

/** One endpoint per URL (its jobs, circuit and secret are the URL's); no private address unless allowed. */
const checkWebhookEndpoints = (w: { endpoints: { url: string }[]; allow_private: boolean }, ctx: z.RefinementCtx) => {
  const seen = new Map<string, number>();
  w.endpoints.forEach((e, i) => {
    const href = new URL(e.url).href;
    const first = seen.get(href);
    if (first !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['endpoints', i, 'url'],
        message: `${maskUrl(e.url)} is also entry ${first}: one entry per URL (a URL has one secret; list every event it wants in that entry's \`events\`)`,
      });
    else seen.set(href, i);
    const literal = w.allow_private ? undefined : privateLiteral(e.url);
    if (literal !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['endpoints', i, 'url'],
        message: `${maskUrl(e.url)} is a loopback, private or link-local address (${literal}): refused unless webhooks.allow_private is true`,
      });
  });
};

const WebhooksSchema = s({
  endpoints: z.array(WebhookEndpoint).default([]),
  /** Delivered events' ids (the de-duplication record) and dead letters are kept this long, then pruned. */
  keep_days: num(z.number().positive()).default(7),
  /** Allow endpoints on loopback, private, link-local and unique-local addresses (tests, on-premise receivers). */
  allow_private: bool(z.boolean()).default(false),
  /** Deliveries in flight to one endpoint at once (per process). */
  concurrency_per_endpoint: num(z.number().int().min(1).max(64)).default(4),
}).superRefine(checkWebhookEndpoints);

export const ConfigSchema = s({
  server: s({
    host: z.string().default('127.0.0.1'),
    port: num(z.number().int().min(0).max(65535)).default(3000),
    /** Public address used in magic links; defaults to http://{host}:{port}. */
    base_url: z.string().url().optional(),
    body_limit_bytes: num(z.number().int().positive()).default(1024 * 1024),
    /** A request whose headers or body have not fully arrived by then is answered 408 and closed (slow clients). */
    request_timeout_ms: num(z.number().int().min(100)).default(30_000),
    trust_proxy: bool(z.boolean()).default(false),
  }).prefault({}),
  storage: s({
    path: z.string().default('./data'),
    /** The store's size limit: writes are refused (`write_failing: map_full`) once the data file would pass it. */
    map_size_mb: num(z.number().int().positive()).default(32768),
    /** Disk space kept allocated ahead of the data file, so a full disk never reaches LMDB (src/store/lmdb/disk-reserve.ts). */
    disk_reserve_mb: num(z.number().int().min(1)).default(32),
    /** `lmdb` (embedded, one process, the default) or `postgres` (`url` below). */
    engine: z.enum(['lmdb', 'postgres']).default('lmdb'),
    /** The PostgreSQL database (`postgres://user:password@host:5432/db`); required with `engine: postgres`. */
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL')
      .optional(),
    /** PostgreSQL connections Parley keeps at most. */
    pool_size: num(z.number().int().min(1).max(1000)).default(10),
  })
    .superRefine((storage, ctx) => {
      if (storage.engine === 'postgres' && !storage.url) {
        ctx.addIssue({ code: 'custom', path: ['url'], message: 'required with storage.engine: postgres (a postgres:// URL, e.g. ${DATABASE_URL})' });
      }
    })
    .prefault({}),
  /**
   * The service secret (SDK bearer, protected routes). A profile without the key gets `${SERVICE_SDK_SECRET}`
   * (added by the loader); empty → generated once and kept in the data directory.
   */
  secret: sharedSecret('the service secret'),
  llm: s({
    provider: z.enum(['offline', 'openai']).default('offline'),
    model: z.string().default('offline-1'),
    base_url: optionalUrl(),
    api_key: z.string().default(''),
    timeout_ms: num(z.number().int().positive()).default(30_000),
    max_retries: num(z.number().int().min(0).max(10)).default(1),
    max_tool_steps: num(z.number().int().min(1).max(50)).default(5),
    /** The offline LLM's pause between two pieces of a streamed reply (the demo profile sets one). */
    offline_delta_delay_ms: num(z.number().int().min(0).max(5000)).default(0),
    temperature: num(z.number().min(0).max(2)).optional(),
    system_prompt: z.string().optional(),
    /** Per model, prices per million tokens in `telemetry.currency` (README, "What it cost"): each call's cost is recorded with it. */
    prices: z
      .record(z.string().min(1), s({ prompt: num(z.number().min(0)), cached_prompt: num(z.number().min(0)).optional(), completion: num(z.number().min(0)) }))
      .default({}),
    fallback: s({
      provider: z.enum(['offline', 'openai']),
      model: z.string().default('offline-1'),
      base_url: optionalUrl(),
      api_key: z.string().default(''),
    })
      .superRefine(needsKeyOrUrl)
      .optional(),
  })
    .superRefine(needsKeyOrUrl)
    .prefault({}),
  identity: s({
    allow_anonymous: bool(z.boolean()).default(false),
    session_ttl_minutes: num(z.number().positive()).default(60),
    magic_link_ttl_minutes: num(z.number().positive()).default(15),
    /** HMAC key for session tokens; empty → derived from the service secret. */
    token_secret: sharedSecret('identity.token_secret'),
    /** /auth/magic-link and /auth/verify requests per client IP per minute (429 beyond). */
    rate_limit_per_ip_per_minute: num(z.number().int().positive()).default(30),
    /** /auth/magic-link requests per email address per minute. */
    rate_limit_per_email_per_minute: num(z.number().int().positive()).default(5),
    /** HS256 key of identity tokens (JWTs) the integrator's backend signs; defaults to ${SERVICE_IDENTITY_SECRET}. Empty: none accepted. */
    jwt_secret: sharedSecret('identity.jwt_secret'),
    /** The previous key, still accepted during a rotation. */
    jwt_previous_secret: sharedSecret('identity.jwt_previous_secret'),
    /** An identity token whose `exp` is further ahead than this is refused. */
    jwt_max_lifetime_hours: num(z.number().positive()).default(24),
    /** Visitors: a widget may start with no token; Parley creates a visitor customer and gives it a `visitorToken`. */
    visitors: bool(z.boolean()).default(false),
    /** How long a visitor token is accepted after it was issued. */
    visitor_token_ttl_days: num(z.number().positive()).default(365),
    /** Messages one visitor may send per minute. */
    visitor_messages_per_minute: num(z.number().int().positive()).default(10),
    /** Messages all visitors from one client IP may send per minute. */
    visitor_messages_per_ip_per_minute: num(z.number().int().positive()).default(60),
    /** New visitors one client IP may create per minute (a returning visitor's token creates none). */
    visitor_creations_per_ip_per_minute: num(z.number().int().positive()).default(10),
  }).prefault({}),
  /** People who answer customers: agents and admins (README, "People: agents and admins"). */
  agents: s({
    /** A session ends after this long without a request. */
    session_idle_minutes: num(z.number().positive()).default(120),
    /** A session ends this long after sign-in, however active. */
    session_max_hours: num(z.number().positive()).default(168),
    /** How long a set-password link works. */
    set_password_link_hours: num(z.number().positive()).default(72),
    /** Sign-in attempts per account per minute (429 beyond). */
    sign_in_per_account_per_minute: num(z.number().int().positive()).default(5),
    /** Sign-in attempts per client IP per minute (429 beyond). */
    sign_in_per_ip_per_minute: num(z.number().int().positive()).default(20),
  }).prefault({}),
  /** Human handoff (README, "Human handoff"). */
  handoff: s({
    /**
     * Offer the model the built-in `handoff` tool, and the widget's "Talk to a person" after a "No". The integrator's
     * `POST /conversations/:id/handoff` works either way.
     */
    enabled: bool(z.boolean()).default(true),
    /** The agent inbox highlights a conversation waiting for a person longer than this (README, "Agent inbox"). */
    sla_minutes: num(z.number().positive()).default(5),
    /** Removed (issue 35): nothing hands a conversation back silently. See return_to_assistant_after_minutes. */
    idle_minutes: z
      .undefined({
        error:
          'handoff.idle_minutes was removed: a conversation goes back to the assistant only when an agent releases it, or after handoff.return_to_assistant_after_minutes',
      })
      .optional(),
    /** No agent message this long after a handoff: the customer is asked for an email address and told the team will reply there or here. */
    offline_after_minutes: num(z.number().positive()).default(10),
    /** Unset (default): never. Set: a conversation goes back to the assistant after this long without an agent message, and the customer is told. */
    return_to_assistant_after_minutes: num(z.number().positive()).optional(),
    /** Opening hours of the team (unset: always open). Outside them the customer is told when the team is back. */
    business_hours: BusinessHoursSchema.optional(),
    /** Expected wait shown inside opening hours: the median first agent reply time of the last this many handoffs (of the last 7 days). */
    expected_wait_sample: num(z.number().int().min(1).max(200)).default(20),
  }).prefault({}),
  conversation: s({
    /** false: one turn per customer message, as before bursts (the gathering window then only delays a turn). */
    bursts: bool(z.boolean()).default(true),
    /**
     * The gathering window per channel (ms): a turn starts this long after the last message of a burst (at most 4
     * windows after its first), so the burst is answered by one turn. Messages sent while a turn runs are always
     * answered together by the next turn.
     */
    gather_ms: s({
      web: num(z.number().int().min(0).max(60_000)).default(0),
      whatsapp: num(z.number().int().min(0).max(60_000)).default(1500),
    }).prefault({}),
    /**
     * true: a read call's history records (invoked, result, failed) go with the turn's next write, within 1 s, instead
     * of commits of their own (a turn commits twice, not four times). A crash in that window makes the resumed turn ask
     * the model again, so the read call may run again under a new invocationId (src/conversations/quiet-outputs.ts).
     */
    defer_read_call_records: bool(z.boolean()).default(false),
  }).prefault({}),
  sdk: s({
    /** A turn resumed after a restart or a takeover waits this long for a backend to register its functions. */
    resume_grace_seconds: num(z.number().min(0).max(600)).default(20),
    /**
     * How long a confirmation waits for a `summarizes` function's backend to word its summary (a `summarize` frame)
     * before it falls back to the function's templates or the built-in English summary.
     */
    summary_timeout_ms: num(z.number().int().min(1).max(30_000)).default(2000),
  }).prefault({}),
  session: s({
    history_window: num(z.number().int().min(1).max(500)).default(20),
    idle_minutes: num(z.number().positive()).default(15),
  }).prefault({}),
  safety: s({
    require_confirmation_for: z.array(z.string()).default([]),
    confirmation_timeout_seconds: num(z.number().positive()).default(300),
    invoke_timeout_ms: num(z.number().int().positive()).default(10_000),
  }).prefault({}),
  /** Tools besides the SDK's: MCP servers (README, "Tools from MCP servers"). */
  tools: ToolsSchema,
  channels: s({
    web: s({
      enabled: bool(z.boolean()).default(true),
      /** Allowed Origin headers for /widget/ws; "*" allows any; a request without Origin (non-browser) is allowed. */
      allowed_origins: z.array(z.string()).default(['*']),
      rate_limit_per_minute: num(z.number().int().positive()).default(30),
    }).prefault({}),
    whatsapp: s({
      /** `auto` (every shipped profile, through `${WA_ENABLED:-auto}`): on when phone_id, token, verify_token and app_secret are all set. */
      enabled: z.union([bool(z.boolean()), z.literal('auto')]).default(false),
      provider: z.enum(['meta', 'sdk']).default('meta'),
      phone_id: z.string().default(''),
      /**
       * Messages that reached another number of the business (webhook `metadata.phone_number_id` ≠ phone_id):
       * `answer` them from that number, or `ignore` them (logged, counted as `whatsapp.ignored`).
       */
      other_numbers: z.enum(['answer', 'ignore']).default('answer'),
      token: z.string().default(''),
      verify_token: z.string().default(''),
      app_secret: z.string().default(''),
      webhook_path: z.string().startsWith('/').default('/wa/webhook'),
      graph_url: z.string().url().default(DEFAULT_GRAPH_URL),
      send_timeout_ms: num(z.number().int().positive()).default(10_000),
      max_send_attempts: num(z.number().int().min(1)).default(8),
      lease_ms: num(z.number().int().positive()).default(30_000),
      /**
       * A send interrupted by a crash (request out, answer lost) is not repeated at once: Parley waits
       * this long for Meta's status webhook (which echoes the job id) before sending again.
       */
      uncertain_grace_ms: num(z.number().int().positive()).default(120_000),
      /** provider sdk: how long a reply waits for an SDK with `onSend` to connect (waiting uses no attempts). */
      sdk_wait_ms: num(z.number().int().positive()).default(15 * 60_000),
      /** Webhook de-dup records, delivery records and dead letters are kept this long. */
      retention_days: num(z.number().positive()).default(7),
      /** Per pricing category Meta reports in statuses (`marketing`, `utility`, `authentication`, `service`, …): the price of one billable message, in `telemetry.currency`. */
      prices: z.record(z.string().min(1), num(z.number().min(0))).default({}),
      /**
       * The locale of WhatsApp customers (WhatsApp does not say the user's language): the model is told to answer in
       * it, and confirmations (text and buttons) are worded in it. A language tag: `en`, `es`, `de`, `fr`, `pt-BR`, …
       */
      locale: z
        .string()
        .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, 'a language tag such as en or es-MX')
        .default('en'),
    })
      .transform((wa) =>
        Object.assign(wa, { enabled: wa.enabled === 'auto' ? Boolean(wa.phone_id && wa.token && wa.verify_token && wa.app_secret) : wa.enabled }),
      )
      .prefault({}),
  }).prefault({}),
  proactive: s({
    enabled: bool(z.boolean()).default(false),
    daily_cap: num(z.number().int().min(0)).default(3),
    dedup_window_hours: num(z.number().positive()).default(24),
  }).prefault({}),
  daemon: s({
    enabled: bool(z.boolean()).default(false),
    proactive_followup: bool(z.boolean()).default(false),
    interval_seconds: num(z.number().positive()).default(60),
    idle_minutes: num(z.number().positive()).default(30),
    max_per_cycle: num(z.number().int().positive()).default(20),
  }).prefault({}),
  /**
   * Signed outbound webhooks (README, "Outbound webhooks"): each event POSTed to every endpoint that wants it. A list
   * of endpoints is read as `{ endpoints: [...] }` with the defaults.
   */
  webhooks: z.preprocess((v: unknown) => (Array.isArray(v) ? { endpoints: v } : v), WebhooksSchema).prefault({}),
  /** A delivery that keeps failing is retried for this long, then dead-lettered. */
  webhooks_retry_hours: num(z.number().positive()).default(24),
  /** The first retry's delay; each next one doubles (with jitter), up to an hour. */
  webhooks_retry_base_ms: num(z.number().int().min(1)).default(5000),
  /** A delivery whose answer has not arrived by then counts as failed (and is retried). */
  webhooks_timeout_ms: num(z.number().int().min(100)).default(10_000),
  telemetry: s({
    enabled: bool(z.boolean()).default(true),
    retention_days: num(z.number().positive()).default(14),
    metrics_public: bool(z.boolean()).default(false),
    /** Keep message text in telemetry (message.in / message.out `data.text`) for the dashboard's timeline. */
    store_text: bool(z.boolean()).default(false),
    /** The currency of `llm.prices` and `channels.whatsapp.prices` (a label: costs are reported in it, never converted). */
    currency: z.string().min(1).max(8).default('USD'),
  }).prefault({}),
  /** An outcome for every conversation (docs/outcomes.md), the customer's rating and the model's estimate. */
  outcomes: s({
    /** An open conversation is decided (resolved and assumed, abandoned or unresolved) after this long without a message. */
    assume_after_hours: num(
      z
        .number()
        .positive()
        .max(24 * 30),
    ).default(24),
    /** A resolution is undone (a reopen) when the customer writes again within this many days of it. */
    reopen_days: num(z.number().positive().max(90)).default(7),
    /** CSAT: ask the customer for a rating (1–5, optional comment) once the conversation has an outcome. Off by default. */
    csat: bool(z.boolean()).default(false),
    /** With a model configured: an estimated experience score (1–5 with a one-line reason) for every ended conversation. */
    estimate_experience: bool(z.boolean()).default(false),
  }).prefault({}),
  /** Several nodes on one PostgreSQL (README, "Several nodes"); on LMDB the cluster is this one process. */
  cluster: s({
    /** This node's id; unset or empty → generated at each start (`<hostname>-<6 hex digits>`). A node that rejoins takes `<id>.2`, `.3`, … */
    node_id: z.preprocess(
      (v: unknown) => (v === '' ? undefined : v),
      z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/, 'letters, digits, "-" and "_", starting with a letter or digit, at most 40 characters')
        .optional(),
    ),
    /** A node whose lease is this old without a renewal is presumed gone; heartbeats come every fifth of it. */
    lease_seconds: num(z.number().min(1).max(300)).default(5),
  }).prefault({}),
  /** The knowledge base (README, "Knowledge"): synced sources and optional embeddings. */
  knowledge: s({
    /** Web pages fetched on a schedule: every page a sitemap lists, or a list of URLs. */
    sources: z.array(z.union([s({ sitemap: httpUrl() }), s({ urls: z.array(httpUrl()).min(1) })])).default([]),
    /** How often the sources are fetched again: a number and a unit, e.g. `30m`, `24h`, `7d`. */
    every: z
      .string()
      .regex(/^\d+(\.\d+)?\s*(s|m|h|d)$/, 'a number and a unit (s, m, h or d), e.g. "24h"')
      .default('24h'),
    /** A page that has not answered by then is skipped (kept as it was) until the next sync. */
    fetch_timeout_ms: num(z.number().int().min(100)).default(15_000),
    /** Pages (and sitemaps) larger than this are skipped. */
    max_page_bytes: num(z.number().int().min(1024)).default(5 * 1024 * 1024),
    /** The User-agent the sync sends and matches in robots.txt. */
    user_agent: z.string().min(1).default('ParleyBot'),
    /** An OpenAI-compatible `/embeddings` endpoint: vectors stored with the chunks, merged with keyword ranks (RRF). */
    embeddings: s({
      base_url: httpUrl(),
      model: z.string().min(1),
      api_key: z.string().optional(),
      timeout_ms: num(z.number().int().min(100)).default(15_000),
    }).optional(),
  }).prefault({}),
  logging: s({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  }).prefault({}),
  demo: s({
    /** Start the demo backend (examples/demo-backend) in-process, connected through the real SDK. */
    backend: bool(z.boolean()).default(false),
    /** /demo/session hands a session token to anyone who asks: only loopback clients get one unless this is true. */
    allow_remote_sessions: bool(z.boolean()).default(false),
    /** Put the demo's help articles (examples/demo-backend/help/) in the knowledge base at start (idempotent). */
    knowledge: bool(z.boolean()).default(false),
  }).prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
