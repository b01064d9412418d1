// Retries the primary provider on retryable errors, then tries the fallback.
// The response names the provider that actually answered. A request's
// `onText` reaches every attempt: text streamed by an attempt that then fails
// is reported through `onAttemptFailed` like the failure itself, and the caller
// takes it back (src/conversations/reply-stream.ts). Every failed attempt
// is reported (per call, so the caller can record it with its own context —
// a turn's id and step — and once more to the process-wide observer).
import { LlmError, type LlmProvider, type LlmRequest, type LlmResponse } from './types.ts';

export interface FailedAttempt {
  provider: string;
  model: string;
  durationMs: number;
  error: string;
  /** Another attempt (retry or fallback) follows. */
  willRetry: boolean;
}

/** A request that also wants to hear about each failed attempt. */
export type ObservedLlmRequest = LlmRequest & { onAttemptFailed?: (attempt: FailedAttempt) => void };

export interface ResilientLlm extends LlmProvider {
  complete(req: ObservedLlmRequest): Promise<LlmResponse>;
}

export function createResilientLlm(o: {
  primary: LlmProvider;
  fallback?: LlmProvider;
  retries: number;
  now?: () => number;
  /** Process-wide: every failed attempt, whoever made the call. */
  onAttemptFailed?: (provider: string, err: unknown, model: string) => void;
  /** Process-wide: every attempt that was answered (a provider that failed before works again). */
  onAttemptSucceeded?: (provider: string, model: string) => void;
}): ResilientLlm {
  const now = o.now ?? Date.now;
  const attempt = async (
    provider: LlmProvider,
    req: LlmRequest,
    retries: number,
    last: boolean,
    observe: ObservedLlmRequest['onAttemptFailed'],
  ): Promise<LlmResponse> => {
    for (let i = 0; ; i++) {
      const started = now();
      try {
        const res = await provider.complete(req);
        try {
          o.onAttemptSucceeded?.(provider.name, provider.model);
        } catch {
          // an observer's failure never changes the call's outcome
        }
        return res;
      } catch (err) {
        const retryable = err instanceof LlmError ? err.retryable : true;
        const again = retryable && i < retries && !req.signal?.aborted;
        const failed: FailedAttempt = {
          provider: provider.name,
          model: provider.model,
          durationMs: Math.max(0, now() - started),
          error: (err as Error)?.message ?? String(err),
          willRetry: again || (!last && !req.signal?.aborted),
        };
        try {
          observe?.(failed);
          o.onAttemptFailed?.(provider.name, err, provider.model);
        } catch {
          // an observer's failure never changes the call's outcome
        }
        if (!again) throw err;
      }
    }
  };
  return {
    name: o.primary.name,
    model: o.primary.model,
    async complete(req) {
      const { onAttemptFailed: observe, ...inner } = req;
      try {
        return await attempt(o.primary, inner, o.retries, !o.fallback, observe);
      } catch (err) {
        // A cancelled call (its conversation actor stopped) is not handed to the fallback.
        if (!o.fallback || inner.signal?.aborted) throw err;
        return attempt(o.fallback, inner, 0, true, observe);
      }
    },
  };
}
