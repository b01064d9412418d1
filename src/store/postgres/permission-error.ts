// One clear line for a PostgreSQL role that may not create Parley's tables: PostgreSQL says only "permission denied
// for schema public" (42501) or "no schema has been selected to create in" (3F000: the role may use no schema of
// its search_path; since PostgreSQL 15 no role may create in `public` unless granted). The line names the role, the
// database and the grant an owner or a superuser runs, as `storage.url` start-up failures print before exiting.
import type { ClientBase } from 'pg';

interface PgError {
  code?: string;
  message: string;
}

/** Whether `err` is PostgreSQL refusing a right (not a fault of the data or of the connection). */
export const isPermissionError = (err: unknown): boolean => ['42501', '3F000'].includes((err as PgError | undefined)?.code ?? '');

/** An identifier as SQL needs it: bare when it may be, quoted otherwise. */
const ident = (name: string) => (/^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

/** The schema PostgreSQL would create in: the one named by the error, else the first of the search path (not $user). */
function schemaOf(err: PgError, searchPath: string): string {
  const named = /permission denied for schema (\S+)/.exec(err.message)?.[1];
  if (named) return named.replace(/^"|"$/g, '');
  const first = searchPath
    .split(',')
    .map((s) => s.trim().replace(/^"|"$/g, ''))
    .find((s) => s !== '' && s !== '$user');
  return first ?? 'public';
}

/** Describes a permission error raised on `client` (still usable: outside a transaction, or rolled back). */
export async function describePermissionError(client: ClientBase, err: unknown): Promise<string> {
  const e = err as PgError;
  const who = await client
    .query<{ role: string; database: string; search_path: string }>(
      `SELECT current_user AS role, current_database() AS database, current_setting('search_path') AS search_path`,
    )
    .then((r) => r.rows[0])
    .catch(() => undefined);
  const role = who?.role ?? '(the role in storage.url)';
  const database = who?.database ?? '(the database in storage.url)';
  const schema = schemaOf(e, who?.search_path ?? 'public');
  const grant = `GRANT USAGE, CREATE ON SCHEMA ${ident(schema)} TO ${ident(role)};`;
  if (e.code === '3F000') {
    return (
      `PostgreSQL role "${role}" may use no schema to create Parley's tables in, in database "${database}" ` +
      `(${e.message}; search_path: ${who?.search_path ?? 'unknown'}): as the database owner or a superuser, run in "${database}": ${grant}`
    );
  }
  if (/for schema /.test(e.message)) {
    return `PostgreSQL role "${role}" may not create Parley's tables in schema ${schema} of database "${database}" (${e.message}): as the database owner or a superuser, run in "${database}": ${grant}`;
  }
  return (
    `PostgreSQL role "${role}" lacks a right Parley needs in database "${database}" (${e.message}): connect as the role that owns Parley's tables, ` +
    `or as the database owner or a superuser, run in "${database}": ${grant} and make "${role}" the owner of the parley_ tables`
  );
}
