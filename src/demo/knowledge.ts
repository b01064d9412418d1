// The demo's help articles (`demo.knowledge`, on in the default profile): examples/demo-backend/help/ put in the
// knowledge base at start, so `npm start` answers "how do I return an item?" with a cited answer. Idempotent: an
// article already there with the same title and body is left alone (its id is its file name).
import { join } from 'node:path';
import { collectArticles } from '../knowledge/import.ts';
import type { Knowledge } from '../knowledge/index.ts';
import type { Logger } from '../logger.ts';

export const DEMO_HELP_FOLDER = join('examples', 'demo-backend', 'help');

/** Puts the folder's articles in the knowledge base; returns how many were new or changed. */
export async function seedDemoArticles(knowledge: Knowledge, folder: string, logger?: Logger): Promise<number> {
  let written = 0;
  for (const input of await collectArticles(folder)) {
    const known = input.id ? await knowledge.get(input.id) : undefined;
    if (known && known.title === input.title && known.body === input.body) continue;
    await knowledge.upsert(input, { origin: 'demo' });
    written++;
  }
  logger?.info({ written, folder }, 'demo help articles in the knowledge base');
  return written;
}
