// Run the demo backend against a running Parley:
//   SERVICE_SDK_SECRET=... PARLEY_URL=http://127.0.0.1:3000 npx tsx examples/demo-backend/main.ts
import { startDemoBackend } from './backend.ts';

const url = process.env.PARLEY_URL ?? 'http://127.0.0.1:3000';
const secret = process.env.SERVICE_SDK_SECRET;
if (!secret) {
  process.stderr.write('Set SERVICE_SDK_SECRET to the service secret Parley printed at start-up.\n');
  process.exit(1);
}
const backend = await startDemoBackend({ url, secret, logger: console });
process.stdout.write(`demo backend connected to ${url}\n`);
process.on('SIGINT', () => void backend.close().then(() => process.exit(0)));
