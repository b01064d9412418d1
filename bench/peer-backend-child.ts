// Parley's tool in bench/peer.ts: the backend process, connected through the real SDK over a real socket.
import { orderStatusBackend } from './order-backend.ts';

const sdk = await orderStatusBackend(process.env.PARLEY_URL!);
process.send!({ ready: true });
process.on('disconnect', () => void sdk.close().then(() => process.exit(0)));
