// The streaming benchmark's baseline, in its own process like Parley: a bare
// `ws` server that, for each message, streams a completion from the model with
// the official `openai` client (Parley speaks the wire itself) and forwards every text piece at once as a `delta`
// frame, then the whole text as a `message`. No store, no actor, no history.
import OpenAI from 'openai';
import { WebSocketServer } from 'ws';

const model = new OpenAI({ baseURL: process.env.MODEL_URL, apiKey: 'none', maxRetries: 0 });
const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
server.on('connection', (ws) =>
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { id: string; text: string };
    const id = `${frame.id}:r`;
    void (async () => {
      let text = '';
      const stream = await model.chat.completions.create({
        model: 'fake-1',
        messages: [{ role: 'user', content: frame.text }],
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of stream) {
        const piece = chunk.choices[0]?.delta?.content;
        if (!piece) continue;
        text += piece;
        ws.send(JSON.stringify({ type: 'delta', id, text: piece }));
      }
      ws.send(JSON.stringify({ type: 'message', id, role: 'assistant', text, at: Date.now() }));
    })().catch((err: unknown) => ws.send(JSON.stringify({ type: 'error', code: 'internal', message: String(err) })));
  }),
);
server.once('listening', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`"url":"ws://127.0.0.1:${port}"\n`);
});
