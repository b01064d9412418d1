// `tools.mcp`: the MCP servers whose tools the model is offered beside the SDK's (README, "Tools from MCP servers").
// Each entry is a stdio server (`command`) or a Streamable HTTP server (`url`); its tools are named `<id>__<tool>`.
import { z } from 'zod';

const s = z.strictObject;
const DECIMAL = /^\d+$/;
const timeoutMs = z.preprocess((v: unknown) => (typeof v === 'string' && DECIMAL.test(v.trim()) ? Number(v) : v), z.number().int().min(100));

/** Letters, digits and "-", single "_" between them: `__` only ever separates the id from the tool's name. */
export const MCP_ID = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?=[A-Za-z0-9-])){0,23}$/;

export const MCP_MODES = ['read', 'write', 'destructive'] as const;

const common = s({
  id: z.string().regex(MCP_ID, 'letters, digits, "-" and single "_" (never "__"), starting with a letter or digit, at most 24 characters'),
  /** Only these tools (their MCP names) are offered; default: every tool. */
  allow: z.array(z.string().min(1)).optional(),
  /** These tools (their MCP names) are never offered. */
  deny: z.array(z.string().min(1)).default([]),
  /** A call with no answer (and no progress notification) for this long fails with `timeout`. */
  timeout_ms: timeoutMs.default(60_000),
  /** The operator's modes per tool (its MCP name), over the tool's own annotations. */
  modes: z.record(z.string(), z.enum(MCP_MODES)).default({}),
});

const stdio = common.extend({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Set over the inherited PATH, HOME, USER, SHELL, TERM, LOGNAME (the rest of Parley's environment is not passed). */
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
});

const http = common.extend({
  url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), { message: 'must be an http(s) URL' }),
  headers: z.record(z.string(), z.string()).default({}),
});

export const McpServerSchema = z.union([stdio, http]);
export type McpServerConfig = z.infer<typeof McpServerSchema>;
export type McpStdioConfig = z.infer<typeof stdio>;
export type McpHttpConfig = z.infer<typeof http>;

export const ToolsSchema = s({
  mcp: z
    .array(McpServerSchema)
    .default([])
    .superRefine((servers, ctx) => {
      const seen = new Set<string>();
      servers.forEach((srv, i) => {
        if (seen.has(srv.id.toLowerCase())) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `the MCP server id "${srv.id}" is used twice` });
        seen.add(srv.id.toLowerCase());
      });
    }),
}).prefault({});

const SECRET_NAME = /key|token|secret|passw|auth|cookie|credential/i;

/** Values to scrub from every log line: header and `env` values whose names look secret (8+ characters). */
export function mcpSecrets(servers: McpServerConfig[]): string[] {
  return servers.flatMap((srv) => {
    const pairs = Object.entries('url' in srv ? srv.headers : srv.env);
    return pairs.filter(([name, value]) => value.length >= 8 && SECRET_NAME.test(name)).map(([, value]) => value);
  });
}
