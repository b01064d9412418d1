// The scenario file (`*.scenario.yaml`) and the suite file (`parley-suite.yaml`): one zod schema each, from which
// docs/scenario.schema.json is generated (`z.toJSONSchema`) for editors.
import { z } from 'zod';

const text = z.string().min(1).max(4000);

/** What one reply must (not) say. */
export const ReplyExpectation = z.strictObject({
  contains: z.string().min(1).optional().describe('the reply contains this text (case-insensitive)'),
  matches: z.string().min(1).optional().describe('the reply matches this regular expression (case-insensitive)'),
  not_contains: z.string().min(1).optional().describe('the reply does not contain this text (case-insensitive)'),
});

/** A source a reply must cite: a title (contained, case-insensitive), or some of its fields. */
export const SourceExpectation = z.union([
  z.string().min(1).describe('a cited source whose title contains this text (case-insensitive)'),
  z.strictObject({
    title: z.string().min(1).optional().describe('the title contains this text (case-insensitive)'),
    url: z.string().min(1).optional().describe('the URL contains this text'),
    n: z.number().int().min(1).optional().describe('the citation number'),
  }),
]);

/** What the assistant's reply must (not) say, and the sources it must cite. */
export const AssistantReplyExpectation = ReplyExpectation.extend({
  sources: z.array(SourceExpectation).optional().describe('each of these is among the sources the reply cites (an empty list: the reply cites none)'),
});

/** A check on the integrator's backend, through a function it exposes for tests (README, "Testing your conversations"). */
export const BackendExpectation = z.strictObject({
  call: z.string().min(1).describe('the name of a function the backend exposes (e.g. a test-only `checkOrder`)'),
  args: z.record(z.string(), z.unknown()).default({}),
  equals: z.unknown().optional().describe('the result equals this value'),
  contains: z.record(z.string(), z.unknown()).optional().describe('the result has these fields with these values'),
});

export const Expectation = z.strictObject({
  tool: z.string().min(1).optional().describe('a tool the assistant called (in order with the other tool expectations)'),
  args: z.record(z.string(), z.unknown()).optional().describe('a subset of the arguments of that call'),
  confirmation: z
    .enum(['asked', 'approve', 'decline'])
    .optional()
    .describe('a confirmation was asked for the tool; approve/decline also answer it as the customer'),
  no_tool: z.boolean().optional().describe('no tool was called in this turn'),
  reply: AssistantReplyExpectation.optional().describe('the assistant’s reply since the last customer message'),
  handoff: z.boolean().optional().describe('the conversation is (true) or is not (false) with a person'),
  proactive: ReplyExpectation.optional().describe('a proactive message reached the customer'),
  backend: BackendExpectation.optional(),
  judge: z.string().min(1).optional().describe('a criterion in plain words, graded by the configured model'),
});

export const Step = z.union([
  z.strictObject({ customer: text.describe('what the customer writes') }),
  z.strictObject({ expect: Expectation }),
  z.strictObject({ confirm: z.enum(['approve', 'decline']).describe('answer the pending confirmation') }),
]);

export const Customer = z.strictObject({
  externalId: z.string().min(1).max(128),
  channel: z.enum(['web', 'whatsapp']).default('web'),
  locale: z.string().min(2).max(35).optional(),
  verified: z.boolean().default(true).describe('false: a visitor (not signed in)'),
  phone: z
    .string()
    .regex(/^\+\d{6,15}$/)
    .optional()
    .describe('the WhatsApp number (channel whatsapp)'),
});

export const Simulation = z.strictObject({
  persona: z.string().min(1),
  goal: z.string().min(1),
  max_turns: z.number().int().min(1).max(50).default(6),
});

export const Scenario = z
  .strictObject({
    $schema: z.string().optional(),
    name: z.string().min(1).max(200),
    customer: Customer,
    steps: z.array(Step).default([]),
    simulate: Simulation.optional(),
    /** Checked at the end (after the steps or the simulation). */
    expect: z.array(Expectation).default([]),
    judge: z.array(z.string().min(1)).default([]).describe('criteria in plain words, graded by the configured model'),
  })
  .refine((s) => s.steps.length > 0 || s.simulate !== undefined, { message: 'a scenario needs steps or simulate' });

export const Suite = z.strictObject({
  backend: z
    .strictObject({
      command: z.string().min(1).describe('started with PARLEY_URL and SERVICE_SDK_SECRET set; stopped at the end'),
      cwd: z.string().optional(),
      functions: z.array(z.string()).default([]).describe('wait until these functions are connected'),
    })
    .optional(),
  /** The model that plays customers (`simulate`) and grades `judge`: an OpenAI-compatible endpoint. */
  model: z
    .strictObject({
      base_url: z.string().url(),
      model: z.string().min(1),
      api_key_env: z.string().min(1).optional().describe('the environment variable holding the API key'),
      temperature: z.number().min(0).max(2).default(0),
    })
    .optional(),
  /** Merged over the project's configuration for the embedded Parley. */
  config: z.record(z.string(), z.unknown()).optional(),
});

export type ReplyExpectation = z.infer<typeof ReplyExpectation>;
export type SourceExpectation = z.infer<typeof SourceExpectation>;
export type BackendExpectation = z.infer<typeof BackendExpectation>;
export type Expectation = z.infer<typeof Expectation>;
export type Step = z.infer<typeof Step>;
export type Scenario = z.infer<typeof Scenario>;
export type Suite = z.infer<typeof Suite>;

/** The JSON Schema committed as docs/scenario.schema.json. */
export function scenarioJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(Scenario, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
