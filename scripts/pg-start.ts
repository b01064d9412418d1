// `npm run pg:start [-- --port N] [-- --no-fsync]`: a throw-away PostgreSQL for development (the same
// server the tests start: Debian's binaries, a temp dir, 127.0.0.1 only, trust auth). Prints the
// DATABASE_URL of an empty `parley` database and runs until Ctrl-C, which removes it and its data.
import { parseArgs } from 'node:util';
import { startPostgres } from '../test/support/postgres.ts';

const { values } = parseArgs({
  options: { port: { type: 'string' }, 'no-fsync': { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
});
if (values.help) {
  process.stdout.write('npm run pg:start [-- --port N] [-- --no-fsync]\n');
  process.exit(0);
}
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
  process.stderr.write(`pg:start: --port ${values.port} is not a port number\n`);
  process.exit(2);
}

const server = await startPostgres({ port, fsync: !values['no-fsync'] }).catch((err: Error) => {
  process.stderr.write(`pg:start: ${err.message}\n`);
  process.exit(1);
});
const url = await server.createDatabase('parley');
process.stdout.write(
  [
    `PostgreSQL is running on 127.0.0.1:${server.port}${values['no-fsync'] ? ' (fsync off: not durable)' : ''}; data in ${server.dir}, removed when it stops.`,
    `DATABASE_URL=${url}`,
    '',
    `  export DATABASE_URL=${url}`,
    `  psql ${url}`,
    '',
    'Ctrl-C stops it.',
    '',
  ].join('\n'),
);

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(0),
    (err: Error) => {
      process.stderr.write(`pg:start: ${err.message}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
process.on('SIGHUP', shutdown);
