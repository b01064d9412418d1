// Entry point: `npm start` (tsx) or `node dist/main.js` (the production build). Loads the profile, starts
// Parley, stops cleanly on SIGTERM/SIGINT.
import { HELP, parseCli } from './cli.ts';
import { ConfigError, loadConfig, PROJECT_ROOT } from './config/load.ts';
import { chooseLogFormat, logDestination } from './log-format.ts';
import { readVersion } from './project-root.ts';
import { isFailedCommitWrite } from './store/unawaited-write.ts';

async function runMigrateStore(args: string[]) {
  const { migrateStore, MigrateStoreError } = await import('./tools/migrate-store.ts');
  try {
    await migrateStore(args, { write: (line) => process.stderr.write(`${line}\n`) });
  } catch (err) {
    const known = err instanceof MigrateStoreError || (err as Error).name === 'StoreOpenError';
    process.stderr.write(`parley migrate-store: ${known ? (err as Error).message : ((err as Error).stack ?? String(err))}\n`);
    process.exit(1);
  }
}

async function runKnowledge(args: string[]) {
  const { importFolder, ImportError } = await import('./knowledge/import.ts');
  const { profileDefaults } = await import('./tools/profile-defaults.ts');
  try {
    await importFolder(args, { write: (line) => process.stderr.write(`${line}\n`), profile: () => profileDefaults(process.env) });
  } catch (err) {
    const known = err instanceof ImportError || (err as Error).name === 'ZodError' || (err as { code?: string }).code === 'ECONNREFUSED';
    process.stderr.write(`parley knowledge: ${known ? (err as Error).message : ((err as Error).stack ?? String(err))}\n`);
    process.exit(1);
  }
}

async function runTest(args: string[]) {
  const { parleyTest } = await import('./scenarios/command.ts');
  const io = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t), loadConfig: () => loadConfig(process.env).config };
  try {
    process.exitCode = await parleyTest(args, io);
  } catch (err) {
    process.stderr.write(`parley test: ${err instanceof ConfigError ? `configuration error: ${err.message}` : ((err as Error).stack ?? String(err))}\n`);
    process.exitCode = 1;
  }
  // Sockets and timers of the embedded Parley are closed; leave even if a backend left a handle open.
  setImmediate(() => process.exit(process.exitCode));
}

async function runAgents(args: string[]) {
  const { parseAgentsArgs, runAgentsCli, AgentsCliError } = await import('./tools/agents-cli.ts');
  try {
    const { config, fields } = parseAgentsArgs(args);
    const loaded = loadConfig(config ? Object.assign({}, process.env, { SERVICE_CONFIG: config }) : process.env);
    for (const line of await runAgentsCli(loaded.config, fields)) process.stdout.write(`${line}\n`);
  } catch (err) {
    const known = err instanceof AgentsCliError || err instanceof ConfigError;
    process.stderr.write(`parley agents: ${known ? (err as Error).message : ((err as Error).stack ?? String(err))}\n`);
    process.exit(known ? 64 : 1);
  }
}

/** What to do about a listen error a newcomer meets first: the port is taken (by another Parley, say). */
function startHint(err: unknown): string {
  return (err as { code?: string }).code === 'EADDRINUSE'
    ? ' (another program listens there: choose a port with PORT=3001 npm start, or server.port in your profile)'
    : '';
}

async function main() {
  const cli = parseCli(process.argv.slice(2));
  if (cli.kind === 'help') return void process.stdout.write(`${HELP}\n`);
  if (cli.kind === 'version') return void process.stdout.write(`${readVersion(PROJECT_ROOT)}\n`);
  if (cli.kind === 'error') {
    process.stderr.write(`parley: ${cli.message}\n\n${HELP}\n`);
    process.exit(64);
  }
  if (cli.kind === 'migrate-store') return runMigrateStore(cli.args);
  if (cli.kind === 'knowledge') return runKnowledge(cli.args);
  if (cli.kind === 'test') return runTest(cli.args);
  if (cli.kind === 'agents') return runAgents(cli.args);
  const env = cli.config ? Object.assign({}, process.env, { SERVICE_CONFIG: cli.config }) : process.env;
  // Loaded only to run: --help and --version answer without opening the store or loading native modules.
  const { createParley } = await import('./app.ts');
  let loaded;
  try {
    loaded = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`parley: configuration error: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const testMode = process.env.SERVICE_TEST_MODE === '1';
  let parley;
  try {
    parley = await createParley({
      config: loaded.config,
      configPath: loaded.path,
      testMode,
      logDestination: await logDestination(chooseLogFormat(process.stdout.isTTY === true, process.env)),
    });
  } catch (err) {
    process.stderr.write(`parley: cannot start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  let url: string;
  try {
    url = await parley.start();
  } catch (err) {
    // e.g. EADDRINUSE: one line, no stack; release the store before leaving.
    process.stderr.write(`parley: cannot start: ${(err as Error).message}${startHint(err)}\n`);
    await parley.stop().catch(() => undefined);
    process.exit(1);
  }
  if (!loaded.config.secret) {
    // Shown once on the console (not in the log stream) so the operator can connect an SDK.
    process.stderr.write(
      `\nParley is running at ${url}\n  demo:        ${url}/demo.html\n  dashboard:   ${url}/telemetry\n  inbox:       ${url}/inbox  (accounts: npx parley agents add --email … --name …)\n  service secret (generated, kept in ${loaded.config.storage.path}/service-secret): ${parley.services.secret}\n  set SERVICE_SDK_SECRET to choose your own.\n\n`,
    );
  } else {
    process.stderr.write(`\nParley is running at ${url}  (demo: ${url}/demo.html, dashboard: ${url}/telemetry, inbox: ${url}/inbox)\n\n`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    parley.services.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    try {
      await parley.stop();
      process.exit(0);
    } catch (err) {
      parley.services.logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('unhandledRejection', (err) => {
    if (isFailedCommitWrite(err))
      parley.services.logger.warn({ cause: 'commit_failed' }, 'a write of a commit that failed was not awaited (the store is unavailable)');
    else parley.services.logger.error({ err }, 'unhandled rejection');
  });
}

void main();
