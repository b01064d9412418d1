// The knowledge feature as src/wiring/ assembles it: the service on the store's knowledge base, the embedder when
// `knowledge.embeddings` is set, the sync of `knowledge.sources`, and the routes.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { createEmbedder } from './embeddings.ts';
import { knowledgePlugin } from './routes.ts';
import { createKnowledge, type Knowledge } from './service.ts';
import { createKnowledgeSync, parseEvery, type KnowledgeSync } from './sync.ts';
import { createKnowledgeTool, type KnowledgeToolSource } from './tool.ts';

export type { Knowledge, KnowledgeSearch } from './service.ts';

export interface KnowledgeFeature {
  knowledge: Knowledge;
  sync: KnowledgeSync;
  /** `search_knowledge`, the tool source the model's catalogue joins (offered while there are articles). */
  tool: KnowledgeToolSource;
  register(app: FastifyInstance): Promise<void>;
}

export function createKnowledgeFeature(services: Services): KnowledgeFeature {
  const { config, clock, logger, store } = services;
  const c = config.knowledge;
  const embedder = c.embeddings
    ? createEmbedder({ baseUrl: c.embeddings.base_url, model: c.embeddings.model, apiKey: c.embeddings.api_key, timeoutMs: c.embeddings.timeout_ms })
    : undefined;
  const knowledge = createKnowledge({ store: store.knowledge, clock, embedder, logger });
  const sync = createKnowledgeSync({
    knowledge,
    sources: c.sources,
    everyMs: parseEvery(c.every),
    fetch: { timeoutMs: c.fetch_timeout_ms, maxBytes: c.max_page_bytes, userAgent: c.user_agent },
    clock,
    logger,
  });
  const tool = createKnowledgeTool({ knowledge, now: () => clock.now(), logger });
  knowledge.onChange(() => void tool.refresh());
  return {
    knowledge,
    sync,
    tool,
    register: async (app) => {
      await app.register(knowledgePlugin, { services, knowledge, sync });
    },
  };
}
