// The transport to one MCP server: a child process over stdio, or Streamable HTTP.
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '../config/mcp-schema.ts';

/**
 * A stdio child's environment: PATH, HOME, USER, SHELL, TERM and LOGNAME inherited (a child given `env` must still
 * find its interpreter), the operator's `env` over them. Nothing else of Parley's environment (its secrets) is passed.
 */
export function childEnv(env: Record<string, string>, inherited: Record<string, string> = getDefaultEnvironment()): Record<string, string> {
  return Object.assign({}, inherited, env);
}

/** Called with each line the child writes to stderr (logged, and kept as the server's last words). */
export type StderrSink = (line: string) => void;

export function createTransport(config: McpServerConfig, onStderr: StderrSink): Transport {
  if ('command' in config) {
    const t = new StdioClientTransport({ command: config.command, args: config.args, env: childEnv(config.env), cwd: config.cwd, stderr: 'pipe' });
    let buffered = '';
    t.stderr?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = (lines.pop() ?? '').slice(-4096);
      for (const line of lines) if (line.trim()) onStderr(line.slice(0, 1000));
    });
    return t;
  }
  return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
}

/**
 * The server no longer knows this client's session (it restarted, or expired it): connect again for a new one. The
 * protocol says 404; some servers (server-everything among them) answer 400 "No valid session ID provided". Either
 * way the server refused the request before running it, so it can be sent again on a new session.
 */
export const isSessionGone = (err: unknown) => err instanceof StreamableHTTPError && (err.code === 404 || (err.code === 400 && /session/i.test(err.message)));
