// The model of bench/peer.ts, in its own process (its CPU counts for neither contender): the fake OpenAI-compatible
// server of the tests, streaming as the real API does. A conversation's turn asks it twice: first it calls
// getOrderStatus, then, once the tool's result is in the messages after the customer's last one, it answers.
import { startFakeOpenAi } from '../test/support/fake-openai.ts';

interface Message {
  role: string;
  content?: unknown;
}

const model = await startFakeOpenAi();
model.fallback((body: { messages: Message[] }) => {
  const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
  const toolAnswered = body.messages.slice(lastUser + 1).some((m) => m.role === 'tool');
  return toolAnswered ? { text: 'Order 1001 is shipped.' } : { toolCalls: [{ name: 'getOrderStatus', args: { orderId: '1001' } }] };
});
// The tests' fake keeps every request for their assertions; a bench's would grow without end.
setInterval(() => void (model.requests.length = 0), 1000).unref();
process.send!({ url: model.url });
process.on('disconnect', () => void model.close().then(() => process.exit(0)));
