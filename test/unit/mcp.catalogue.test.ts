// Issue 37: the MCP catalogue mapping (names, modes, allow/deny), results as tool outcomes, the `tools.mcp` schema, and
// the one seam that merges MCP tools with the SDK's.
import { describe, expect, it } from 'vitest';
import { mcpSecrets, McpServerSchema, ToolsSchema } from '../../src/config/mcp-schema.ts';
import { catalogueFor, modeFromAnnotations, modelName } from '../../src/mcp/catalogue.ts';
import { toOutcome } from '../../src/mcp/results.ts';
import { childEnv } from '../../src/mcp/transport.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { configuredSecrets } from '../../src/secret.ts';
import { withToolSources, type ToolSource } from '../../src/runtime/tool-source.ts';
import { visitorMayUse } from '../../src/conversations/llm-step.ts';
import type { CatalogEntry, SdkHub } from '../../src/services.ts';

const MODEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const server = (o: Record<string, unknown> = {}) => McpServerSchema.parse(Object.assign({ id: 'acme', command: 'x' }, o));

describe('MCP catalogue', () => {
  it('modes from annotations follow the protocol’s pessimistic defaults', () => {
    expect(modeFromAnnotations({ readOnlyHint: true })).toBe('read');
    expect(modeFromAnnotations({ readOnlyHint: true, destructiveHint: true })).toBe('read');
    expect(modeFromAnnotations({ readOnlyHint: false, destructiveHint: false })).toBe('write');
    expect(modeFromAnnotations({ readOnlyHint: false })).toBe('destructive');
    expect(modeFromAnnotations({ readOnlyHint: false, destructiveHint: true })).toBe('destructive');
    expect(modeFromAnnotations({ destructiveHint: false })).toBe('destructive');
    expect(modeFromAnnotations({})).toBe('destructive');
    expect(modeFromAnnotations(undefined)).toBe('destructive');
  });

  it('names are <id>__<tool> in the model’s charset; changed or cut names stay distinct', () => {
    expect(modelName('acme', 'get-sum')).toBe('acme__get-sum');
    const dotted = modelName('acme', 'orders.cancel');
    const underscored = modelName('acme', 'orders_cancel');
    expect(underscored).toBe('acme__orders_cancel');
    expect(dotted).toMatch(/^acme__orders_cancel_[0-9a-f]{6}$/);
    const long = 'x'.repeat(80);
    const longer = `${long}y`;
    for (const n of [dotted, modelName('acme', long), modelName('acme', longer), modelName('acme', 'naïve tool/ä')]) expect(n).toMatch(MODEL_NAME);
    expect(modelName('acme', long)).not.toBe(modelName('acme', longer));
    // Ids never hold "__" (the schema refuses it), so the first "__" always ends the id: no two servers can collide.
    expect(modelName('a', 'b__c')).toBe('a__b__c');
    expect(modelName('a_b', 'c')).toBe('a_b__c');
  });

  it('allow, deny and the operator’s modes shape what is offered', () => {
    const tools = [
      { name: 'read_it', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, annotations: { readOnlyHint: true }, description: 'Reads' },
      { name: 'write_it', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: false }, title: 'Writes' },
      { name: 'nuke', inputSchema: {} as Record<string, unknown> },
    ];
    const all = catalogueFor(server({ modes: { nuke: 'write' } }), tools);
    expect(all.map((t) => [t.entry.name, t.entry.mode, t.tool])).toEqual([
      ['acme__read_it', 'read', 'read_it'],
      ['acme__write_it', 'write', 'write_it'],
      ['acme__nuke', 'write', 'nuke'],
    ]);
    expect(all[1].entry.description).toBe('Writes');
    expect(all[2].entry.parameters).toEqual({ type: 'object', properties: {} });
    expect(all.every((t) => t.entry.connectionId === 'mcp:acme')).toBe(true);
    expect(catalogueFor(server({ allow: ['read_it', 'nuke'], deny: ['nuke'] }), tools).map((t) => t.tool)).toEqual(['read_it']);
  });

  it('results: text, structured content once, images described not inlined, isError as a failed call', () => {
    expect(
      toOutcome({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toEqual({ ok: true, data: 'a\nb' });
    expect(toOutcome({ content: [{ type: 'text', text: '{"t": 22}' }], structuredContent: { t: 22 } })).toEqual({ ok: true, data: { t: 22 } });
    expect(toOutcome({ content: [{ type: 'text', text: 'Warm' }], structuredContent: { t: 22 } })).toEqual({
      ok: true,
      data: { text: 'Warm', structuredContent: { t: 22 } },
    });
    const image = toOutcome({ content: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }] });
    expect(image).toEqual({ ok: true, data: '[image (image/png, 8 bytes), not shown]' });
    expect(toOutcome({ isError: true, content: [{ type: 'text', text: 'db offline' }] })).toEqual({
      ok: false,
      error: { code: 'tool_error', message: 'db offline' },
    });
    expect(toOutcome({ isError: true })).toEqual({ ok: false, error: { code: 'tool_error', message: 'The tool reported an error' } });
  });

  it('a stdio child keeps PATH and the rest of the inherited basics under the operator’s env', () => {
    expect(childEnv({ API_KEY: 'k', HOME: '/srv' }, { PATH: '/usr/bin', HOME: '/root' })).toEqual({ PATH: '/usr/bin', HOME: '/srv', API_KEY: 'k' });
  });
});

describe('tools.mcp schema', () => {
  it('refuses ids that could blur the prefix, duplicate ids, and an entry that is both stdio and HTTP', () => {
    for (const id of ['a__b', '_a', 'a_', 'has space', 'a.b', '', 'x'.repeat(25)])
      expect(McpServerSchema.safeParse({ id, command: 'x' }).success, id).toBe(false);
    for (const id of ['a', 'a_b', 'crm-2', 'A9']) expect(McpServerSchema.safeParse({ id, command: 'x' }).success, id).toBe(true);
    expect(
      ToolsSchema.safeParse({
        mcp: [
          { id: 'a', command: 'x' },
          { id: 'A', url: 'http://h/mcp' },
        ],
      }).success,
    ).toBe(false);
    expect(McpServerSchema.safeParse({ id: 'a', command: 'x', url: 'http://h/mcp' }).success).toBe(false);
    expect(McpServerSchema.safeParse({ id: 'a', url: 'ftp://h/mcp' }).success).toBe(false);
    expect(McpServerSchema.safeParse({ id: 'a', command: 'x', modes: { t: 'delete' } }).success).toBe(false);
    expect(server()).toMatchObject({ timeout_ms: 60_000, deny: [], modes: {}, env: {}, args: [] });
  });
});

describe('the tool seam', () => {
  const entry = (name: string, o: Partial<CatalogEntry> = {}): CatalogEntry =>
    Object.assign({ name, description: '', parameters: {}, mode: 'read' as const, connectionId: 'c1', visitors: false }, o);
  const fakeSdk = (entries: CatalogEntry[], calls: string[]): SdkHub =>
    ({
      catalog: () => entries,
      invoke: async (name: string) => (calls.push(`sdk:${name}`), { ok: true, data: 'sdk' }),
      onChange: () => () => undefined,
    }) as unknown as SdkHub;
  const source = (entries: CatalogEntry[], calls: string[]): ToolSource => ({
    catalog: () => entries,
    owns: (name) => name.startsWith('acme__'),
    invoke: async (name) => (calls.push(`mcp:${name}`), { ok: true, data: 'mcp' }),
    onChange: () => () => undefined,
  });

  it('the catalogue is the union; a name an MCP server owns goes to it, every other name to the SDK', async () => {
    const calls: string[] = [];
    const union = withToolSources(fakeSdk([entry('getOrder'), entry('acme__lookup')], calls), [
      source([entry('acme__lookup', { connectionId: 'mcp:acme', mode: 'destructive' })], calls),
    ]);
    expect(union.catalog().map((e) => [e.name, e.connectionId])).toEqual([
      ['acme__lookup', 'mcp:acme'],
      ['getOrder', 'c1'],
    ]);
    const ctx = { customerId: 'c', channel: 'web' as const, conversationId: 'v' };
    await union.invoke('acme__lookup', {}, ctx, {});
    await union.invoke('acme__gone', {}, ctx, {});
    await union.invoke('getOrder', {}, ctx, {});
    expect(calls).toEqual(['mcp:acme__lookup', 'mcp:acme__gone', 'sdk:getOrder']);
  });

  it('visitors (not signed in) are never offered an MCP tool, whatever its mode', () => {
    const tools = catalogueFor(server({ modes: { b: 'write' } }), [
      { name: 'a', inputSchema: {}, annotations: { readOnlyHint: true } },
      { name: 'b', inputSchema: {} },
      { name: 'c', inputSchema: {} },
    ]);
    expect(tools.map((t) => visitorMayUse(t.entry))).toEqual([false, false, false]);
    // An SDK function that opts in is (main's rule, issue 32): the MCP entries are held to it like the SDK's.
    expect(visitorMayUse(entry('getHours', { visitors: true }))).toBe(true);
  });
});

describe('MCP secrets in the logs', () => {
  it('header and env values with secret-looking names are scrubbed by value; ordinary ones are not', () => {
    const servers = ToolsSchema.parse({
      mcp: [
        { id: 'a', url: 'http://h/mcp', headers: { Authorization: 'Bearer abc123456', Accept: 'application/json' } },
        { id: 'b', command: 'x', env: { CRM_API_KEY: 'k-0123456789', MODE: 'production-mode', DB_PASSWORD: 'short' } },
      ],
    }).mcp;
    expect(mcpSecrets(servers)).toEqual(['Bearer abc123456', 'k-0123456789']);
    const config = ConfigSchema.parse({ tools: { mcp: [{ id: 'a', url: 'http://h/mcp', headers: { 'X-Api-Key': 'xk-0123456789' } }] } });
    expect(configuredSecrets(config, 'service-secret-0123456789')).toContain('xk-0123456789');
  });
});
