// The model that plays customers (`simulate`) and grades `judge` criteria: any OpenAI-compatible endpoint, named in
// the suite file (`model: { base_url, model, api_key_env }`). Without one, such scenarios are skipped.
import OpenAI from 'openai';
import type { ScenarioModel } from './runner.ts';
import type { Suite } from './schema.ts';

/** The simulated customer answers this, alone, when its goal is reached. */
export const GOAL_REACHED = 'GOAL_REACHED';

export function createScenarioModel(m: NonNullable<Suite['model']>, env: NodeJS.ProcessEnv = process.env): ScenarioModel {
  const client = new OpenAI({ baseURL: m.base_url, apiKey: (m.api_key_env ? env[m.api_key_env] : undefined) || 'none', maxRetries: 2, timeout: 60_000 });
  const ask = async (system: string, user: string) => {
    const res = await client.chat.completions.create({
      model: m.model,
      temperature: m.temperature,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    return (res.choices[0]?.message?.content ?? '').trim();
  };
  return {
    async nextCustomerMessage({ persona, goal, transcript }) {
      const text = await ask(
        `You play a customer talking to a support assistant. Persona: ${persona}\nYour goal: ${goal}\nWrite only your next message, in one or two sentences. When the goal is reached (or cannot be), answer exactly ${GOAL_REACHED}.`,
        transcript ? `The conversation so far:\n${transcript}` : 'Start the conversation.',
      );
      return !text || text.includes(GOAL_REACHED) ? undefined : text.slice(0, 4000);
    },
    async judge({ criterion, transcript }) {
      const text = await ask(
        'You grade a support conversation against one criterion. Answer with JSON only: {"pass": true|false, "reason": "one sentence"}.',
        `Criterion: ${criterion}\n\nConversation:\n${transcript}`,
      );
      try {
        const v = JSON.parse(text.replace(/^```(?:json)?|```$/g, '')) as { pass?: unknown; reason?: unknown };
        return { pass: v.pass === true, reason: String(v.reason ?? '') };
      } catch {
        return { pass: false, reason: `the judge did not answer with JSON: ${text.slice(0, 200)}` };
      }
    },
  };
}
