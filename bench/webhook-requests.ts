// Signed single-message WhatsApp webhooks for the open-loop load generator
// (bench/rate-load-child.ts), each with a message id unique to its block.
import { signPayload } from '../src/whatsapp/signature.ts';
import type { RequestGenerator } from './rate-load-child.ts';
import { textMessage, WA, webhookBody } from '../test/support/whatsapp.ts';

const signedWebhooks: RequestGenerator = (count, args) => {
  const { block } = args as { block: string };
  return Array.from({ length: count }, (_, i) => {
    const body = JSON.stringify(webhookBody([textMessage(`+1555400${String(i % 1000).padStart(4, '0')}`, 'hello', `wamid.bench.${block}.${i}`)]));
    return { body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signPayload(body, WA.app_secret) } };
  });
};

export default signedWebhooks;
