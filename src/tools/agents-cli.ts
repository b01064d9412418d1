// `parley agents add --email … --name … [--role agent|admin] [--config …]`: creates an agent account and prints a
// one-time link to set its password. It opens the store itself when Parley is not running; when the store is held
// (LMDB: Parley is running on it), it asks the running Parley (POST /api/v1/agents with the service secret).
import { parseArgs } from 'node:util';
import { createAgentAccounts, setPasswordPath } from '../agents/accounts.ts';
import { CreateAgentRequest } from '../agents/wire.ts';
import { createClock } from '../clock.ts';
import { describeZodError } from '../http/errors.ts';
import type { Config } from '../config/schema.ts';
import { resolveSecret } from '../secret.ts';
import { openStore } from '../store/open.ts';

export const AGENTS_HELP = `Usage: parley agents add --email <email> --name <name> [--role agent|admin] [--config <profile>]

Creates an agent account (role agent, or admin: may also create accounts) and prints a one-time link to set its
password (valid for agents.set_password_link_hours).`;

export class AgentsCliError extends Error {}

type Created = { email: string; role: string; agentId: string; path: string };

/** The account fields from the command line, or an AgentsCliError saying what is wrong. */
export function parseAgentsArgs(args: string[]): { config?: string; fields: { name: string; email: string; role: 'agent' | 'admin' } } {
  if (args[0] !== 'add') throw new AgentsCliError(`${args[0] ? `unknown command "${args[0]}"` : 'say what to do: add'}\n\n${AGENTS_HELP}`);
  let values;
  try {
    ({ values } = parseArgs({
      args: args.slice(1),
      options: { email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, config: { type: 'string', short: 'c' } },
      strict: true,
    }));
  } catch (err) {
    throw new AgentsCliError(`${(err as Error).message}\n\n${AGENTS_HELP}`);
  }
  const missing = (['email', 'name'] as const).filter((k) => values[k] === undefined).map((k) => `--${k}`);
  if (missing.length) throw new AgentsCliError(`${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} needed\n\n${AGENTS_HELP}`);
  const r = CreateAgentRequest.safeParse({ email: values.email, name: values.name, role: values.role ?? 'agent' });
  if (!r.success) throw new AgentsCliError(`${describeZodError(r.error, '')}\n\n${AGENTS_HELP}`);
  return { config: values.config, fields: r.data };
}

async function viaStore(config: Config, fields: ReturnType<typeof parseAgentsArgs>['fields']): Promise<Created | Error> {
  let store;
  try {
    store = await openStore(config.storage);
  } catch (err) {
    if ((err as Error).name === 'StoreOpenError') return err as Error; // e.g. held by a running Parley
    throw err;
  }
  try {
    const accounts = createAgentAccounts({ store, clock: createClock(), linkTtlMs: config.agents.set_password_link_hours * 3_600_000 });
    const r = await accounts.create(fields);
    if (!r.ok) throw new AgentsCliError(`an account with the email ${fields.email} exists already`);
    return { email: r.agent.email, role: r.agent.role, agentId: r.agent.agentId, path: setPasswordPath(r.setPasswordToken) };
  } finally {
    await store.close();
  }
}

async function viaServer(config: Config, fields: ReturnType<typeof parseAgentsArgs>['fields'], storeError: Error): Promise<Created> {
  const host = config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}/api/v1/agents`;
  const { secret } = resolveSecret(config.secret, config.storage.path);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify(fields),
    });
  } catch (err) {
    throw new AgentsCliError(`cannot open the store (${storeError.message}) nor reach a running Parley at ${url} (${(err as Error).message})`);
  }
  const body = (await res.json()) as { agent?: { agentId: string; email: string; role: string }; setPasswordUrl?: string; error?: { message: string } };
  if (!res.ok || !body.agent || !body.setPasswordUrl) throw new AgentsCliError(`the running Parley refused: ${body.error?.message ?? `HTTP ${res.status}`}`);
  return { email: body.agent.email, role: body.agent.role, agentId: body.agent.agentId, path: body.setPasswordUrl };
}

/** Runs `parley agents …` with a loaded configuration; resolves with the lines to print. */
export async function runAgentsCli(config: Config, fields: ReturnType<typeof parseAgentsArgs>['fields']): Promise<string[]> {
  const direct = await viaStore(config, fields);
  const created = direct instanceof Error ? await viaServer(config, fields, direct) : direct;
  const base = config.server.base_url ?? `http://${config.server.host}:${config.server.port}`;
  return [
    `Created ${created.role} ${created.email} (${created.agentId}).`,
    `Open this link to set the password (once, within ${config.agents.set_password_link_hours} h):`,
    `  ${base.replace(/\/$/, '')}${created.path}`,
  ];
}
