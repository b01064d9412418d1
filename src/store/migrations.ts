// Ordered schema migrations, run once each at start-up inside a transaction.
// Append only: never edit or reorder a migration that has shipped.
import type { Store } from './types.ts';

export interface Migration {
  version: number;
  description: string;
  /** Runs inside a write transaction; use the table's *InTx writes. */
  up(store: Store): void;
}

export const migrations: Migration[] = [
  {
    version: 1,
    description: 'initial tables',
    up() {
      // Tables are created on open; nothing to move yet.
    },
  },
];

export const LATEST_SCHEMA_VERSION = migrations[migrations.length - 1].version;
