// The one seam between the tool catalogue the model sees and where tools run. The SDK hub is one source; other
// `ToolSource`s (MCP servers, src/mcp/) join it here: the catalogue is their union, and an invoke goes to the source
// that owns the name. Names a source owns hide an SDK function of the same name (MCP names are `<id>__<tool>`).
import type { InvokeContextInput } from '../../sdk/src/protocol.ts';
import type { CatalogEntry, InvokeOutcome, SdkHub } from '../services.ts';

/** A catalogue of tools besides the SDK's, invoked like SDK functions (same idempotency key, same timeout rules). */
export interface ToolSource {
  catalog(): CatalogEntry[];
  /** True when `name` is one of this source's tools (whether or not it is reachable right now). */
  owns(name: string): boolean;
  /** Never rejects: failures come back as `ok: false` (`unknown_function` | `timeout` | `disconnected` | `tool_error`). */
  invoke(name: string, args: unknown, context: InvokeContextInput, options: { invocationId?: string; timeoutMs?: number }): Promise<InvokeOutcome>;
  onChange(listener: () => void): () => void;
}

/** Catalogue entries from an MCP server have `connectionId` `mcp:<server id>`. */
export const MCP_CONNECTION_PREFIX = 'mcp:';

/** The SDK hub with other tool sources merged into its catalogue and invoke path; everything else is the hub's. */
export function withToolSources(sdk: SdkHub, sources: ToolSource[]): SdkHub {
  if (sources.length === 0) return sdk;
  const ownerOf = (name: string) => sources.find((s) => s.owns(name));
  return {
    catalog() {
      const extra = sources.flatMap((s) => s.catalog());
      return [...extra, ...sdk.catalog().filter((e) => !ownerOf(e.name))];
    },
    invoke(name, args, context, options = {}) {
      const source = ownerOf(name);
      return source ? source.invoke(name, args, context, options) : sdk.invoke(name, args, context, options);
    },
    onChange(listener) {
      const offs = [sdk.onChange(listener), ...sources.map((s) => s.onChange(listener))];
      return () => offs.forEach((off) => off());
    },
    connectionCount: () => sdk.connectionCount(),
    registeredCount: () => sdk.registeredCount(),
    summarize: (name, args, locale, timeoutMs) => (ownerOf(name) || !sdk.summarize ? Promise.resolve(undefined) : sdk.summarize(name, args, locale, timeoutMs)),
    canSend: () => sdk.canSend(),
    send: (message, timeoutMs) => sdk.send(message, timeoutMs),
    broadcast: (frame) => sdk.broadcast(frame),
  };
}
