// What `createParley` hands out of the wired parts: to the operators' routes, main.ts, benchmarks and tests.
import type { LiveActor } from '../runtime/supervisor.ts';
import type { ConversationHost } from '../conversations/host.ts';
import type { SdkHubRuntime } from '../sdk/hub.ts';
import type { ClusterHub } from '../sdk/cluster-hub.ts';
import type { ClusterMembership } from '../cluster/membership.ts';
import type { WhatsAppChannel } from '../whatsapp/channel.ts';
import type { LlmFailureWatch } from '../llm/loud-failures.ts';
import type { McpManager } from '../mcp/manager.ts';
import type { Knowledge } from '../knowledge/index.ts';
import type { Webhooks } from '../webhooks/delivery.ts';
import type { Parts } from './parts.ts';

export interface WiredComponents {
  /** This node's SDK connections (the gateway, /ready, diagnostics). */
  hub: SdkHubRuntime;
  /** Every node's SDK functions and `onSend` handlers: what the features call (issue 17, part 4). */
  clusterHub: ClusterHub;
  webhooks: Webhooks;
  /** The MCP servers of `tools.mcp` (their tools join the SDK's in the catalogue the model sees). */
  mcp: McpManager;
  host: ConversationHost;
  /** This node's lease in the cluster: joined before the server listens, left last when it stops. */
  cluster: ClusterMembership;
  whatsapp: WhatsAppChannel;
  /** Loud LLM failures (401/403/404): `/ready`'s `checks.llm`. */
  llmFailures: LlmFailureWatch;
  /** The knowledge base (issue 36): articles, search (the `KnowledgeSearch` port), sync. */
  knowledge: Knowledge;
  liveActors: () => LiveActor[];
  diagnostics: () => Promise<Record<string, unknown>>;
}

export function components(parts: Parts): WiredComponents {
  const { localHub, hub, membership, supervisor } = parts.cluster;
  const { whatsapp, webhooks, sessions } = parts.channels;
  const { mcp, llmFailures, knowledge } = parts.tooling;
  const { host } = parts.conversations;
  const { daemon } = parts.features;
  return {
    hub: localHub,
    clusterHub: hub,
    webhooks,
    mcp,
    host,
    cluster: membership,
    whatsapp,
    llmFailures,
    knowledge: knowledge.knowledge,
    liveActors: () => supervisor.liveActors(),
    diagnostics: async () => ({
      conversations: { active: host.activeCount(), list: host.list().slice(0, 200) },
      web: { openWidgets: sessions.count() },
      whatsapp: await whatsapp.diagnostics(),
      webhooks: webhooks.counters(),
      mcp: { servers: mcp.report(), tools: mcp.catalog().map((f) => ({ name: f.name, mode: f.mode, server: f.connectionId })) },
      daemon: daemon ? { state: daemon.getSnapshot().value, ...daemon.getSnapshot().context } : { enabled: false },
    }),
  };
}
