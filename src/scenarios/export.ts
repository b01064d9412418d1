// `parley test export <conversationId>`: a scenario from a stored conversation (src/ops/scenario-export.ts, which the
// dashboard's "Export as test" uses too), read from the store of the project's configuration.
import { writeFileSync } from 'node:fs';
import { storedHistory } from '../conversations/tool-calls.ts';
import { scenarioFrom, scenarioYaml } from '../ops/scenario-export.ts';
import { openStore } from '../store/open.ts';
import type { TestIo } from './io.ts';

export { scenarioFrom, scenarioYaml, SCHEMA_LINE } from '../ops/scenario-export.ts';

export async function exportCommand(args: string[], output: string | undefined, io: TestIo): Promise<number> {
  const conversationId = args[0];
  if (!conversationId || args.length > 1) return (io.err('Usage: parley test export <conversationId> [--output file]\n'), 64);
  let store;
  try {
    store = await openStore(io.loadConfig().storage);
  } catch (err) {
    if ((err as Error).name !== 'StoreOpenError') throw err;
    // On LMDB a running Parley holds the store: say so in one line, and how to export from the running Parley.
    const running = `or export from the running Parley: the dashboard's "Export as test", or GET /api/v1/conversations/${conversationId}/scenario`;
    return (io.err(`parley test export: ${(err as Error).message}; ${running}\n`), 1);
  }
  try {
    const record = await store.conversations.get(conversationId);
    if (!record) return (io.err(`parley test export: no conversation ${conversationId} in this store\n`), 1);
    const text = scenarioYaml(scenarioFrom(record, await storedHistory(store.history, conversationId)));
    if (output) writeFileSync(output, text);
    else io.out(text);
    return 0;
  } finally {
    await store.close();
  }
}
