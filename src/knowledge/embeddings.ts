// An OpenAI-compatible embeddings endpoint (`POST {base_url}/embeddings`), vectors normalised to unit length so that a
// dot product is their cosine similarity.
import { request } from 'undici';
import { z } from 'zod';

export interface Embedder {
  embed(texts: string[]): Promise<number[][]>;
}

const Answer = z.object({ data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int().optional() })) });

export const normalise = (v: number[]): number[] => {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
};

/** Texts per request. */
const BATCH = 64;

export function createEmbedder(o: { baseUrl: string; model: string; apiKey?: string; timeoutMs: number }): Embedder {
  const url = `${o.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  const batch = async (input: string[]) => {
    const res = await request(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: o.model, input }),
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`embeddings endpoint answered HTTP ${res.statusCode}`);
    }
    const answer = Answer.parse(await res.body.json());
    if (answer.data.length !== input.length) throw new Error(`embeddings endpoint gave ${answer.data.length} vectors for ${input.length} texts`);
    const ordered = answer.data.every((d) => d.index !== undefined) ? [...answer.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)) : answer.data;
    return ordered.map((d) => normalise(d.embedding));
  };
  return {
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += BATCH) out.push(...(await batch(texts.slice(i, i + BATCH))));
      return out;
    },
  };
}
