// An MCP `tools/call` result as a tool outcome the conversation records: text parts as text, structured content as
// data, images and other binary parts described (never inlined), and `isError` as a failed call the model is told about.
import { storableJson } from '../http/storable-text.ts';
import type { InvokeOutcome } from '../services.ts';

interface ContentPart {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

export interface McpCallResult {
  content?: ContentPart[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** Old servers (protocol 2024-10-07) answer `toolResult`. */
  toolResult?: unknown;
}

/** Bytes of base64 data, for a description. */
const base64Bytes = (b64: string) => Math.floor((b64.length * 3) / 4) - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);

export function describePart(p: ContentPart): string {
  switch (p.type) {
    case 'text':
      return p.text ?? '';
    case 'image':
    case 'audio':
      return `[${p.type} (${p.mimeType ?? 'unknown type'}, ${base64Bytes(p.data ?? '')} bytes), not shown]`;
    case 'resource_link':
      return `[resource link: ${p.name ?? ''} ${p.uri ?? ''}]`.replace(/\s+]/, ']');
    case 'resource': {
      const r = p.resource ?? {};
      if (typeof r.text === 'string') return r.text;
      return `[resource ${r.uri ?? ''} (${r.mimeType ?? 'unknown type'}, ${base64Bytes(r.blob ?? '')} bytes), not shown]`;
    }
    default:
      return `[${p.type} content, not shown]`;
  }
}

const sameJson = (text: string, value: unknown) => {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
};

/** The outcome of `r`, with U+FFFD for any NUL in it (a server's text is kept, and no store keeps NUL: storable-text.ts). */
export const toOutcome = (r: McpCallResult): InvokeOutcome => storableJson(outcomeOf(r));

function outcomeOf(r: McpCallResult): InvokeOutcome {
  const text = (r.content ?? [])
    .map(describePart)
    .filter((t) => t !== '')
    .join('\n');
  if (r.isError) return { ok: false, error: { code: 'tool_error', message: text || 'The tool reported an error' } };
  if (r.structuredContent !== undefined) {
    // Servers also put the structured result in a text part (the protocol asks them to): say it once.
    if (!text || sameJson(text, r.structuredContent)) return { ok: true, data: r.structuredContent };
    return { ok: true, data: { text, structuredContent: r.structuredContent } };
  }
  if (r.content === undefined && r.toolResult !== undefined) return { ok: true, data: r.toolResult };
  return { ok: true, data: text };
}
