// `parley migrate-store --from lmdb:./data --to postgres://…`: copies a store into an empty one of any engine, with
// progress on stderr. The source is opened like a running Parley would open it, so a source still in use by a
// running process is refused (LMDB's directory lock), and a target that already holds data is refused.
import type { Logger } from '../logger.ts';
import { openLmdbSource, openStoreAt } from '../store/open.ts';
import type { StoreRecordKind } from '../store/transfer.ts';
import { importRecords } from './import-records.ts';

export const MIGRATE_STORE_USAGE = `Usage: parley migrate-store --from lmdb:<path> --to <postgres://… | lmdb:<path>>

Copies every record (customers, conversations and their history, magic links, proactive sends and dedup keys,
queued jobs, kept job ids and dead letters, WhatsApp delivery state, telemetry) from an LMDB store into an empty
store. Stop Parley first: the source directory must not be in use. The target must hold no data yet.`;

export class MigrateStoreError extends Error {
  override readonly name = 'MigrateStoreError';
}

function option(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i >= 0) return argv[i + 1];
  const inline = argv.find((a) => a.startsWith(`${name}=`));
  return inline?.slice(name.length + 1);
}

const describe = (counts: Partial<Record<StoreRecordKind, number>>) =>
  Object.entries(counts)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

export async function migrateStore(argv: string[], o: { write: (line: string) => void; logger?: Logger; poolSize?: number }): Promise<Record<string, number>> {
  const from = option(argv, '--from');
  const to = option(argv, '--to');
  if (!from || !to) throw new MigrateStoreError(`--from and --to are required\n\n${MIGRATE_STORE_USAGE}`);
  if (!from.startsWith('lmdb:')) throw new MigrateStoreError(`--from must be lmdb:<path> (got ${from})`);
  const source = await openLmdbSource(from.slice('lmdb:'.length), { logger: o.logger });
  try {
    const target = await openStoreAt(to, { logger: o.logger, poolSize: o.poolSize });
    try {
      if (!(await target.isEmpty())) throw new MigrateStoreError(`the target ${target.location} already holds data: migrate into an empty database`);
      o.write(`migrate-store: copying ${source.location} into ${target.location}`);
      let last = 0;
      const counts = await importRecords(target, source.records(), (c) => {
        if (Date.now() - last < 1000) return;
        last = Date.now();
        o.write(`migrate-store: ${describe(c)}`);
      });
      await target.flushed();
      o.write(`migrate-store: done: ${describe(counts) || 'the source was empty'}`);
      return counts;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
