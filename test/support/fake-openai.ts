// A local OpenAI-compatible endpoint for tests: POST /v1/chat/completions
// answers from a script (a queue of responses, or functions of the request).
import Fastify from 'fastify';

export interface ScriptedResponse {
  text?: string | null;
  toolCalls?: { name: string; args: unknown }[];
  /** Sent verbatim as `function.arguments` (e.g. malformed JSON). */
  rawArguments?: string;
  status?: number;
  /** With an error `status`: the body's `error.message`, as OpenAI words it (e.g. "Incorrect API key provided: sk-…"). */
  errorMessage?: string;
  delayMs?: number;
}

export type ScriptStep = ScriptedResponse | ((body: any) => ScriptedResponse);

export interface FakeOpenAi {
  url: string;
  requests: any[];
  script(...steps: ScriptStep[]): void;
  /** Used when the script queue is empty. */
  fallback(step: ScriptStep): void;
  close(): Promise<void>;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });
  const requests: any[] = [];
  const queue: ScriptStep[] = [];
  let fallback: ScriptStep = { text: 'OK.' };
  let seq = 0;
  const pendingDelays = new Set<() => void>();

  app.post('/v1/chat/completions', async (request, reply) => {
    const body = request.body as any;
    requests.push(body);
    const step = queue.length ? queue.shift()! : fallback;
    const r = typeof step === 'function' ? step(body) : step;
    if (r.delayMs) {
      await new Promise<void>((resolve) => {
        const finish = () => {
          clearTimeout(t);
          pendingDelays.delete(finish);
          resolve();
        };
        const t = setTimeout(finish, r.delayMs);
        pendingDelays.add(finish);
      });
    }
    if (r.status && r.status >= 400) {
      return reply.code(r.status).send({ error: { message: r.errorMessage ?? `scripted ${r.status}`, type: 'server_error', code: null } });
    }
    const toolCalls = (r.toolCalls ?? []).map((c, i) => ({
      id: `call_${++seq}_${i}`,
      type: 'function',
      function: { name: c.name, arguments: r.rawArguments ?? JSON.stringify(c.args ?? {}) },
    }));
    return {
      id: `chatcmpl-${++seq}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
          message: { role: 'assistant', content: r.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        },
      ],
      usage: { prompt_tokens: 11 * (body.messages?.length ?? 1), completion_tokens: 7, total_tokens: 11 * (body.messages?.length ?? 1) + 7 },
    };
  });

  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `${address}/v1`,
    requests,
    script: (...steps) => void queue.push(...steps),
    fallback: (step) => void (fallback = step),
    async close() {
      for (const finish of [...pendingDelays]) finish();
      await app.close();
    },
  };
}
