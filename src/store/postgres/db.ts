// What a repository runs its SQL on: the pool (each statement on its own) or one transaction's client. Statements
// are plain parameterized SQL; a named one is prepared once per connection and then only bound and executed.

export interface Statement {
  /** Set for the hot, fixed statements: node-postgres prepares it once per connection under this name. */
  name?: string;
  text: string;
}

export interface Db {
  rows<R>(statement: Statement, values: unknown[]): Promise<R[]>;
  /**
   * NOTIFY `channel` with `payload` once what was written here is committed: on the pool at once (each statement
   * commits on its own), in a transaction after its COMMIT, never after a rollback (notices.ts says why not inside).
   */
  announce(channel: string, payload: string): void;
}

/** A fixed statement, prepared once per connection (`name` must be unique in the store). */
export const prepared = (name: string, text: string): Statement => ({ name: `parley_${name}`, text });

/** A JSON document for a `json` column (`undefined` → NULL). */
export const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/** PostgreSQL's text cannot hold U+0000: free text keeps everything else and shows U+FFFD in its place. */
export const text = (value: string): string => (value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value);

/** The first row's column, or undefined. */
export async function first<R>(rows: Promise<R[]>): Promise<R | undefined> {
  return (await rows)[0];
}

/** A LIMIT parameter: a whole number, or NULL (no limit) for an infinite one. */
export const limitOf = (n: number): number | null => (Number.isFinite(n) ? Math.max(0, Math.floor(n)) : null);
