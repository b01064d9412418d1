// Runs one scenario against a Parley: drives the customer over the widget protocol, checks each expectation on what
// happened since the customer's last message (the final `expect` list on the whole conversation), and returns the
// differences. Scenarios that need a model (`simulate`, `judge`) are skipped, with the reason, when none is configured.
import type { Scenario, Expectation } from './schema.ts';
import type { Difference, Observed } from './observed.ts';
import { checkBackendResult, checkConfirmation, checkLocal, type Cursor } from './expectations.ts';
import { observedOf } from './frames.ts';
import { openSession } from './session.ts';
import { openWhatsAppSession } from './whatsapp-session.ts';
import type { Session, SessionTarget } from './turns.ts';

export interface RunTarget extends SessionTarget {
  /** Calls a function the integrator's backend exposes (Parley's test path); undefined: not available. */
  invokeBackend?: (name: string, args: Record<string, unknown>) => Promise<{ ok: boolean; data?: unknown; error?: string }>;
  /** A model to play customers and grade `judge` criteria; undefined: those scenarios are skipped. */
  model?: ScenarioModel;
}

export interface ScenarioModel {
  /** The customer's next message (undefined: the goal is reached). */
  nextCustomerMessage(o: { persona: string; goal: string; transcript: string }): Promise<string | undefined>;
  judge(o: { criterion: string; transcript: string }): Promise<{ pass: boolean; reason: string }>;
}

export interface StepDifference extends Difference {
  /** 1-based step number ("end" for the final expectations). */
  step: number | 'end';
}

export interface ScenarioResult {
  name: string;
  file: string;
  status: 'passed' | 'failed' | 'skipped';
  reason?: string;
  differences: StepDifference[];
  durationMs: number;
  conversationId?: string;
}

interface Window {
  frames: number;
  tools: number;
}

async function observe(session: Session, from: Window): Promise<Observed> {
  return observedOf(session.frames.slice(from.frames), (await session.tools()).slice(from.tools), session.withHuman());
}

const transcriptOf = (session: Session) =>
  session.frames
    .map((f) => (f.type === 'message' ? `${f.role}: ${f.text}` : f.type === 'confirm' ? `(asks to confirm ${f.name} ${JSON.stringify(f.args)})` : ''))
    .filter(Boolean)
    .join('\n');

function needsModel(s: Scenario): string | undefined {
  if (s.simulate) return 'simulate needs a model (model: in parley-suite.yaml); none is configured';
  if (s.judge.length || [...s.steps, ...s.expect.map((e) => ({ expect: e }))].some((st) => 'expect' in st && st.expect.judge))
    return 'judge needs a model (model: in parley-suite.yaml); none is configured';
  return undefined;
}

async function check(e: Expectation, session: Session, window: Window, cursor: Cursor, target: RunTarget): Promise<Difference[]> {
  const out: Difference[] = [];
  if (e.confirmation === 'approve' || e.confirmation === 'decline') {
    const asked = checkConfirmation(e, await observe(session, window));
    if (asked.length) return asked;
    await session.confirm(e.confirmation === 'approve');
  }
  out.push(...checkLocal(e, await observe(session, window), cursor));
  if (e.backend) {
    if (!target.invokeBackend)
      out.push({ expected: `backend ${e.backend.call}`, happened: 'no test path to the backend (an embedded Parley, or a running one in test mode, has one)' });
    else out.push(...checkBackendResult(e.backend, await target.invokeBackend(e.backend.call, e.backend.args)));
  }
  if (e.judge && target.model) {
    const verdict = await target.model.judge({ criterion: e.judge, transcript: transcriptOf(session) });
    if (!verdict.pass) out.push({ expected: `judge: ${e.judge}`, happened: verdict.reason });
  }
  return out;
}

export async function runScenario(s: Scenario, file: string, target: RunTarget): Promise<ScenarioResult> {
  const started = Date.now();
  const result = (status: ScenarioResult['status'], differences: StepDifference[], extra: Partial<ScenarioResult> = {}): ScenarioResult => ({
    name: s.name,
    file,
    status,
    differences,
    durationMs: Date.now() - started,
    ...extra,
  });
  const whatsapp = s.customer.channel === 'whatsapp' ? target.whatsapp : undefined;
  if (s.customer.channel === 'whatsapp' && !whatsapp)
    return result('skipped', [], { reason: 'channel whatsapp is driven through an embedded Parley only (not --url): not run' });
  const missing = target.model ? undefined : needsModel(s);
  if (missing) return result('skipped', [], { reason: missing });
  const session = whatsapp ? await openWhatsAppSession(Object.assign({}, target, { whatsapp }), s.customer) : await openSession(target, s.customer);
  const differences: StepDifference[] = [];
  try {
    let window: Window = { frames: 0, tools: 0 };
    let cursor: Cursor = { tool: 0 };
    const startTurn = async (text: string) => {
      window = { frames: session.frames.length, tools: (await session.tools()).length };
      cursor = { tool: 0 };
      await session.say(text);
    };
    for (const [i, step] of s.steps.entries()) {
      if ('customer' in step) await startTurn(step.customer);
      else if ('confirm' in step) {
        if (!(await session.confirm(step.confirm === 'approve')))
          differences.push({ step: i + 1, expected: `a confirmation to ${step.confirm}`, happened: 'none was pending' });
      } else for (const d of await check(step.expect, session, window, cursor, target)) differences.push({ step: i + 1, ...d });
    }
    if (s.simulate && target.model) {
      for (let turn = 0; turn < s.simulate.max_turns; turn++) {
        const next = await target.model.nextCustomerMessage({ persona: s.simulate.persona, goal: s.simulate.goal, transcript: transcriptOf(session) });
        if (next === undefined) break;
        await startTurn(next);
      }
    }
    const whole = { frames: 0, tools: 0 };
    const endCursor = { tool: 0 };
    for (const e of s.expect) for (const d of await check(e, session, whole, endCursor, target)) differences.push({ step: 'end', ...d });
    for (const criterion of s.judge) {
      const verdict = await target.model!.judge({ criterion, transcript: transcriptOf(session) });
      if (!verdict.pass) differences.push({ step: 'end', expected: `judge: ${criterion}`, happened: verdict.reason });
    }
  } catch (err) {
    differences.push({ step: 'end', expected: 'the conversation runs to the end', happened: (err as Error).message });
  } finally {
    session.close();
  }
  return result(differences.length ? 'failed' : 'passed', differences, { conversationId: session.conversationId });
}
