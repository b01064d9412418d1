// Issue 33 part 3: a resumed turn waits for its tools. After a restart or a takeover the interrupted turn resumes at
// once, usually before the backend's SDK has registered again: with no SDK function registered, its model step waits up
// to `sdk.resume_grace_seconds` (typing shown) for one; if none comes, the step runs without them and an error event
// `tools_unavailable` is recorded (counted by /metrics). A new turn while no backend is registered is recorded too
// as a `tools.unavailable` event (not waited for: the customer should not wait on a backend that may never come).
import type { LlmStepInput } from '../../machines/conversation.ts';
import type { Active, Runtime } from './runtime.ts';

export const TOOLS_UNAVAILABLE = 'tools_unavailable';

/** Resolves when a backend registered, `ms` passed, or the step was stopped; true when a backend is registered. */
function waitForBackend(rt: Runtime, sdk: NonNullable<Runtime['deps']['sdk']>, ms: number, signal: AbortSignal): Promise<boolean> {
  const { clock } = rt.deps.services;
  return new Promise<boolean>((resolve) => {
    const done = () => {
      off();
      clock.clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(sdk.registered());
    };
    const off = sdk.onChange(() => {
      if (sdk.registered()) done();
    });
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done);
    if (sdk.registered() || signal.aborted) done();
  });
}

/**
 * Before a model step: `typing` shows the customer something happens while a resumed turn waits. Never throws; the
 * step runs after it either way.
 */
export async function awaitTools(rt: Runtime, a: Active, input: LlmStepInput, signal: AbortSignal, typing: () => void): Promise<void> {
  const sdk = rt.deps.sdk;
  if (!sdk || sdk.registered()) return;
  const resumed = a.resumeUntil !== undefined;
  if (!resumed && input.step !== 1) return;
  const { clock, config, telemetry } = rt.deps.services;
  if (resumed) {
    typing();
    if (await waitForBackend(rt, sdk, config.sdk.resume_grace_seconds * 1000, signal)) {
      // Its calls wait for their function as long again (invokeOnceBack).
      a.resumeUntil = Math.max(a.resumeUntil ?? 0, clock.now() + config.safety.invoke_timeout_ms);
      return;
    }
    if (signal.aborted) return;
  }
  // The resumed turn that waited in vain is an error; a new turn with no backend is recorded as what it is (a
  // deployment may run without one for a while), counted by /metrics with it.
  telemetry.event({
    type: resumed ? 'error' : 'tools.unavailable',
    conversationId: input.conversationId,
    customerId: input.customerId,
    data: {
      code: TOOLS_UNAVAILABLE,
      where: resumed ? 'conversation.resume' : 'conversation.turn',
      turnId: input.turnId,
      message: resumed
        ? `no backend registered its functions within sdk.resume_grace_seconds (${config.sdk.resume_grace_seconds}); the resumed turn ran without them`
        : 'no backend is registered: the turn runs without its functions',
    },
  });
}
