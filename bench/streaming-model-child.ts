// The streaming benchmark's model, in its own process so its work (a timer and
// a write per token for every stream) does not delay the widget clients'
// timestamps: the fake OpenAI server streaming TOKENS tokens TOKEN_GAP_MS
// apart. The parent learns the URL, then each reply's first-token time as
// performance.timeOrigin + performance.now() (µs resolution, comparable
// across processes on one machine), keyed by the customer's message.
import { startFakeOpenAi } from '../test/support/fake-openai.ts';

const tokens = Number(process.env.TOKENS ?? 50);
const gapMs = Number(process.env.TOKEN_GAP_MS ?? 20);
const reply = Array.from({ length: tokens }, (_, i) => `tok${i}`).join(' ');
const model = await startFakeOpenAi();
model.fallback((body: { messages: { role: string; content: string }[] }) => {
  const marker = [...body.messages].reverse().find((m) => m.role === 'user')!.content;
  return { text: reply, chunkDelayMs: gapMs, onFirstText: () => process.send!({ marker, at: performance.timeOrigin + performance.now() }) };
});
process.send!({ url: model.url });
process.on('disconnect', () => void model.close().then(() => process.exit(0)));
