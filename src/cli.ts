// The server's command line: --help, --version, --config. Everything else is configured by the profile.
import { parseArgs } from 'node:util';

export const HELP = `Usage: parley [--config <profile or path>] [--help] [--version]
       parley migrate-store --from lmdb:<path> --to postgres://…
       parley knowledge import <folder> [--url <parley url>] [--secret <service secret>] [--locale <tag>]
       parley test [paths…] [--repeat k] [--reporter pretty|junit|json] [--url URL]   (parley test --help)
       parley agents add --email <email> --name <name> [--role agent|admin] [--config <profile>]

Starts Parley: the widget, WhatsApp, the SDK gateway, proactive messages and telemetry in one process.
\`test\` runs conversation scenarios (*.scenario.yaml) against an embedded Parley; \`test export <id>\` writes one.
\`migrate-store\` copies an LMDB store into an empty PostgreSQL database (stop Parley first), with progress.
\`knowledge import\` sends every .md, .html, .txt and .pdf file of a folder to a running Parley's knowledge base
(PARLEY_URL, default the profile's address; the secret from SERVICE_SDK_SECRET when --secret is not given, else for the
profile's own Parley the one it generated in its storage.path).
\`agents add\` creates an agent (or admin) account and prints a one-time link to set its password.

Options:
  -c, --config <profile>  profile name (config/config.<name>.yaml) or path to a YAML file; same as SERVICE_CONFIG
  -h, --help              print this help and exit
  -v, --version           print the version and exit

Environment:
  SERVICE_CONFIG          profile to load (default: config/config.yaml)
  SERVICE_SDK_SECRET      the service secret (empty: generated once and kept in the data directory)
  SERVICE_TEST_MODE=1     test-only routes (/__test__/*) and a mock WhatsApp sender; never in production
  LOG_FORMAT=json|pretty  log lines as JSON or readable text (default: readable in a terminal, JSON otherwise)

Docs: README.md (configuration keys, routes, the widget protocol).`;

export type CliAction =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'run'; config?: string }
  | { kind: 'migrate-store'; args: string[] }
  | { kind: 'knowledge'; args: string[] }
  | { kind: 'test'; args: string[] }
  | { kind: 'agents'; args: string[] }
  | { kind: 'error'; message: string };

export function parseCli(argv: string[]): CliAction {
  if (argv[0] === 'migrate-store') return { kind: 'migrate-store', args: argv.slice(1) };
  if (argv[0] === 'knowledge') return { kind: 'knowledge', args: argv.slice(1) };
  if (argv[0] === 'test') return { kind: 'test', args: argv.slice(1) };
  if (argv[0] === 'agents') return { kind: 'agents', args: argv.slice(1) };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' }, config: { type: 'string', short: 'c' } },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    return { kind: 'error', message: (err as Error).message };
  }
  if (parsed.values.help) return { kind: 'help' };
  if (parsed.values.version) return { kind: 'version' };
  return { kind: 'run', config: parsed.values.config };
}
