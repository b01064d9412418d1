// Every configured MCP server as one `ToolSource` (src/runtime/tool-source.ts): the union of their offered tools,
// invokes routed by the `<id>__` prefix, and a report per server for `/ready` and `/diagnostics`. Servers connect in
// the background: start-up never waits for them, and a server that is down only leaves its tools out.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { McpServerConfig } from '../config/mcp-schema.ts';
import type { Logger } from '../logger.ts';
import type { ToolSource } from '../runtime/tool-source.ts';
import { createMcpServer, type McpServer, type McpServerOptions, type McpServerStatus } from './server.ts';

export interface McpManager extends ToolSource {
  start(): void;
  stop(): Promise<void>;
  /** One line per server: connected, tool count, last error. */
  report(): McpServerStatus[];
  /** `ok`, or which servers are not connected (shown as degraded by `/ready`, never as not ready). */
  check(): string;
}

export function createMcpManager(o: {
  servers: McpServerConfig[];
  clock: Clock;
  logger: Logger;
  version: string;
  /** Tests: a transport of their own, a faster backoff. */
  serverOptions?: Partial<Pick<McpServerOptions, 'makeTransport' | 'backoff' | 'pingEveryMs'>>;
}): McpManager {
  const log = o.logger.child({ component: 'mcp' });
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const l of listeners) {
      try {
        l();
      } catch (err) {
        log.error({ err }, 'tool catalogue listener failed');
      }
    }
  };
  const servers = new Map<string, McpServer>(
    o.servers.map((config) => [
      config.id,
      createMcpServer(Object.assign({ config, clock: o.clock, logger: o.logger, version: o.version, onToolsChanged: changed }, o.serverOptions)),
    ]),
  );

  const serverFor = (name: string) => {
    const i = name.indexOf('__');
    return i > 0 ? servers.get(name.slice(0, i)) : undefined;
  };

  return {
    catalog: () => [...servers.values()].flatMap((s) => s.tools().map((t) => t.entry)),

    owns: (name) => serverFor(name) !== undefined,

    async invoke(name, args, _context, options) {
      const server = serverFor(name);
      const tool = server?.tools().find((t) => t.entry.name === name);
      if (!server || !tool) {
        const why = server && !server.status().connected ? `its server is not connected (${server.status().lastError ?? 'connecting'})` : 'no such tool';
        return {
          ok: false,
          error: { code: server && !server.status().connected ? 'disconnected' : 'unknown_function', message: `The tool "${name}" cannot be called: ${why}` },
        };
      }
      // The MCP server's own timeout applies (`timeout_ms`, default 60 s), not the SDK's invoke timeout.
      return server.call(tool.tool, args, options.invocationId ?? randomUUID());
    },

    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },

    start() {
      for (const s of servers.values()) s.start();
    },

    async stop() {
      await Promise.all([...servers.values()].map((s) => s.stop()));
    },

    report: () => [...servers.values()].map((s) => s.status()),

    check() {
      const down = [...servers.values()].map((s) => s.status()).filter((s) => !s.connected);
      return down.length === 0 ? 'ok' : down.map((s) => `${s.id}: ${s.lastError ?? s.state}`).join('; ');
    },
  };
}
