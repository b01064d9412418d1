// Run the demo backend against a running Parley:
//   SERVICE_SDK_SECRET=... PARLEY_URL=http://127.0.0.1:3000 npx tsx examples/demo-backend/main.ts
import { startDemoBackend, type DemoFault } from './backend.ts';

const url = process.env.PARLEY_URL ?? 'http://127.0.0.1:3000';
const secret = process.env.SERVICE_SDK_SECRET;
if (!secret) {
  process.stderr.write('Set SERVICE_SDK_SECRET to the service secret Parley printed at start-up.\n');
  process.exit(1);
}
// DEMO_FAULTS=cancel-noop,rename-status breaks it on purpose; PARLEY_TEST_FUNCTIONS=1 adds orderStateForTests.
const faults = (process.env.DEMO_FAULTS ?? '').split(',').filter(Boolean) as DemoFault[];
const testFunctions = process.env.PARLEY_TEST_FUNCTIONS === '1';
const backend = await startDemoBackend({ url, secret, logger: console, faults, testFunctions });
process.stdout.write(`demo backend connected to ${url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void backend.close().then(() => process.exit(0)));
