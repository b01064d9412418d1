// One MCP server: connects (spawning a stdio child, or opening a Streamable HTTP session), keeps its tool list
// (refreshed on `notifications/tools/list_changed`), calls its tools with the server's timeout, and when the
// connection is lost (the child exits, the session is gone, a ping or call fails on the transport) drops its tools
// and connects again with backoff: 0.5 s doubling to 30 s, on the injected clock.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Clock, TimerHandle } from '../clock.ts';
import type { McpServerConfig } from '../config/mcp-schema.ts';
import { storableText } from '../http/storable-text.ts';
import type { Logger } from '../logger.ts';
import type { InvokeOutcome } from '../services.ts';
import { catalogueFor, type McpCatalogueEntry, type McpToolInfo } from './catalogue.ts';
import { toOutcome, type McpCallResult } from './results.ts';
import { createTransport, isSessionGone, type StderrSink } from './transport.ts';

/** The key of the call's `_meta` that carries Parley's invocation id (the idempotency key of the call). */
export const INVOCATION_META_KEY = 'parley/invocationId';

export type McpServerState = 'connecting' | 'connected' | 'disconnected' | 'stopped';

export interface McpServerStatus {
  id: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  connected: boolean;
  tools: number;
  lastError: string | null;
  /** Connections made since start (the first one included). */
  connections: number;
}

export interface McpServerOptions {
  config: McpServerConfig;
  clock: Clock;
  logger: Logger;
  version: string;
  onToolsChanged: () => void;
  makeTransport?: (config: McpServerConfig, onStderr: StderrSink) => Transport;
  backoff?: { initialMs: number; maxMs: number };
  pingEveryMs?: number;
}

export interface McpServer {
  start(): void;
  stop(): Promise<void>;
  tools(): McpCatalogueEntry[];
  call(tool: string, args: unknown, invocationId: string): Promise<InvokeOutcome>;
  status(): McpServerStatus;
}

const message = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 500);

export function createMcpServer(o: McpServerOptions): McpServer {
  const { config, clock } = o;
  const log = o.logger.child({ component: 'mcp', server: config.id });
  const backoff = o.backoff ?? { initialMs: 500, maxMs: 30_000 };
  const pingEveryMs = o.pingEveryMs ?? 30_000;
  const makeTransport = o.makeTransport ?? createTransport;
  // Starting a server (a child that loads its interpreter) can take longer than a short call timeout allows.
  const setupTimeoutMs = Math.max(config.timeout_ms, 30_000);
  let state: McpServerState = 'disconnected';
  let client: Client | undefined;
  let tools: McpCatalogueEntry[] = [];
  let lastError: string | null = null;
  let failures = 0;
  let connections = 0;
  let retry: TimerHandle | undefined;
  let ping: TimerHandle | undefined;
  /** Connections whose session the server forgot: their calls failed before the server ran them. */
  const forgotten = new WeakSet<Client>();

  const setTools = (next: McpCatalogueEntry[]) => {
    const changed = next.length !== tools.length || next.some((t, i) => JSON.stringify(t) !== JSON.stringify(tools[i]));
    tools = next;
    if (changed) o.onToolsChanged();
  };

  const listTools = async (c: Client) => {
    const all: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.listTools(cursor ? { cursor } : undefined, { timeout: setupTimeoutMs });
      all.push(...(page.tools as McpToolInfo[]));
      cursor = page.nextCursor;
    } while (cursor && all.length < 10_000);
    if (c === client) setTools(catalogueFor(config, all));
  };

  /** The connection `c` is gone: forget it and its tools, and connect again after the backoff. */
  const lost = (c: Client | undefined, reason: string) => {
    if (c !== client || state === 'stopped') return;
    client = undefined;
    if (c) void c.close().catch(() => undefined);
    clock.clearTimeout(ping);
    lastError = reason;
    const wasConnected = state === 'connected';
    state = 'disconnected';
    setTools([]);
    const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures, 20));
    failures++;
    log[wasConnected ? 'warn' : 'debug']({ reason, retryInMs: delay }, 'MCP server connection lost; connecting again');
    clock.clearTimeout(retry);
    retry = clock.setTimeout(connect, delay);
  };

  const schedulePing = (c: Client) => {
    clock.clearTimeout(ping);
    ping = clock.setTimeout(() => {
      if (c !== client) return;
      c.ping({ timeout: setupTimeoutMs }).then(
        () => schedulePing(c),
        (err: unknown) => lost(c, `ping failed: ${message(err)}`),
      );
    }, pingEveryMs);
  };

  function connect() {
    if (state === 'stopped') return;
    state = 'connecting';
    const c = new Client({ name: 'parley', version: o.version }, { capabilities: {} });
    client = c;
    c.onclose = () => lost(c, 'the connection closed');
    c.onerror = (err) => {
      if (!isSessionGone(err)) return;
      forgotten.add(c);
      lost(c, 'the server no longer knows the session');
    };
    c.setNotificationHandler(ToolListChangedNotificationSchema, () =>
      listTools(c).catch((err: unknown) => log.warn({ err: { message: message(err) } }, 'could not list the changed tools')),
    );
    const transport = makeTransport(config, (line) => {
      log.debug({ stderr: line }, 'MCP server stderr');
    });
    c.connect(transport, { timeout: setupTimeoutMs })
      .then(() => listTools(c))
      .then(() => {
        if (c !== client) return;
        state = 'connected';
        failures = 0;
        connections++;
        lastError = null;
        log.info({ tools: tools.length }, 'MCP server connected');
        schedulePing(c);
      })
      .catch((err: unknown) => lost(c, message(err)));
  }

  // A server's own words (an McpError) may hold NUL: kept with U+FFFD in its place, as its results are (results.ts).
  const failure = (code: string, msg: string): InvokeOutcome => ({ ok: false, error: { code, message: storableText(msg) } });

  const callOnce = async (c: Client, tool: string, args: unknown, invocationId: string) => {
    const r = await c.callTool(
      {
        name: tool,
        arguments: args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
        _meta: { [INVOCATION_META_KEY]: invocationId },
      },
      undefined,
      // A progress notification restarts the timeout (long-running tools that report progress are not cut off).
      { timeout: config.timeout_ms, resetTimeoutOnProgress: true, onprogress: () => undefined },
    );
    return toOutcome(r as McpCallResult);
  };

  return {
    start() {
      if (state === 'stopped' || client || retry) return;
      connect();
    },

    async stop() {
      state = 'stopped';
      clock.clearTimeout(retry);
      clock.clearTimeout(ping);
      const c = client;
      client = undefined;
      tools = [];
      await c?.close().catch(() => undefined);
    },

    tools: () => tools,

    async call(tool, args, invocationId) {
      for (let attempt = 0; ; attempt++) {
        const c = client;
        if (!c || state !== 'connected') return failure('disconnected', `The MCP server "${config.id}" is not connected${lastError ? ` (${lastError})` : ''}`);
        try {
          return await callOnce(c, tool, args, invocationId);
        } catch (err) {
          if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
            return failure('timeout', `The MCP tool "${tool}" did not answer within ${config.timeout_ms} ms`);
          // (Closing the forgotten session rejects the call with "connection closed" before its own 404 arrives.)
          if ((isSessionGone(err) || forgotten.has(c)) && attempt === 0) {
            // The server never saw this call (it did not know the session): a new session, then the call once more.
            lost(c, 'the server no longer knows the session');
            clock.clearTimeout(retry);
            retry = undefined;
            connect();
            await waitConnected(() => state, clock, setupTimeoutMs);
            continue;
          }
          if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) return failure('tool_error', message(err));
          lost(c, message(err));
          return failure('disconnected', `The MCP server "${config.id}" went away during the call (${message(err)})`);
        }
      }
    },

    status: () => ({
      id: config.id,
      transport: 'command' in config ? 'stdio' : 'http',
      state,
      connected: state === 'connected',
      tools: tools.length,
      lastError,
      connections,
    }),
  };
}

/** Resolves once the state is no longer `connecting` (or after `ms`). */
async function waitConnected(state: () => McpServerState, clock: Clock, ms: number): Promise<void> {
  const deadline = clock.now() + ms;
  while (state() === 'connecting' && clock.now() < deadline) await new Promise<void>((r) => clock.setTimeout(r, 20));
}
