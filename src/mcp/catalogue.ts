// The catalogue mapping of one MCP server: which of its tools are offered (allow/deny), under which model-facing name
// (`<id>__<tool>`, sanitised to the model's charset), in which mode (annotations, then the operator's override).
import { createHash } from 'node:crypto';
import type { McpServerConfig } from '../config/mcp-schema.ts';
import type { CatalogEntry } from '../services.ts';
import { MCP_CONNECTION_PREFIX } from '../runtime/tool-source.ts';

/** What the server says about one tool (the fields of MCP's `Tool` that Parley reads). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean };
}

export type ToolMode = 'read' | 'write' | 'destructive';

/** One offered tool: its catalogue entry (what the model sees) and the tool's own name on the server. */
export interface McpCatalogueEntry {
  entry: CatalogEntry;
  tool: string;
}

/** OpenAI's (and most providers') function names: `^[a-zA-Z0-9_-]{1,64}$`. */
const MAX_NAME = 64;
const MAX_DESCRIPTION = 2000;

/**
 * The protocol's pessimistic defaults: `readOnlyHint: true` → read; `readOnlyHint: false` with `destructiveHint: false`
 * → write; anything else (no annotations, a destructive or unknown hint) → destructive.
 */
export function modeFromAnnotations(a: McpToolInfo['annotations']): ToolMode {
  if (a?.readOnlyHint === true) return 'read';
  if (a?.readOnlyHint === false && a.destructiveHint === false) return 'write';
  return 'destructive';
}

const shortHash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 6);

/** `<id>__<tool>` in the model's charset; a tool whose name had to change (or be cut) gets a hash of its real name. */
export function modelName(serverId: string, tool: string): string {
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  const name = `${serverId}__${clean}`;
  if (clean === tool && name.length <= MAX_NAME) return name;
  const suffix = `_${shortHash(tool)}`;
  return `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`;
}

const objectSchema = (schema: Record<string, unknown> | undefined): Record<string, unknown> =>
  schema && typeof schema === 'object' && schema.type === 'object' ? schema : { type: 'object', properties: {} };

/** The server's tools as the model sees them, allow/deny applied; names that still collide keep the first tool. */
export function catalogueFor(server: Pick<McpServerConfig, 'id' | 'allow' | 'deny' | 'modes'>, tools: McpToolInfo[]): McpCatalogueEntry[] {
  const allow = server.allow ? new Set(server.allow) : undefined;
  const deny = new Set(server.deny);
  const out = new Map<string, McpCatalogueEntry>();
  for (const t of tools) {
    if ((allow && !allow.has(t.name)) || deny.has(t.name)) continue;
    const name = modelName(server.id, t.name);
    if (out.has(name)) continue;
    const description = (t.description || t.title || t.annotations?.title || '').slice(0, MAX_DESCRIPTION);
    out.set(name, {
      tool: t.name,
      entry: {
        name,
        description,
        parameters: objectSchema(t.inputSchema),
        mode: server.modes[t.name] ?? modeFromAnnotations(t.annotations),
        connectionId: `${MCP_CONNECTION_PREFIX}${server.id}`,
        // An MCP server knows nothing of the customer: its tools are never offered to visitors (who have not signed in).
        visitors: false,
      },
    });
  }
  return [...out.values()];
}
