// Retries the primary provider on retryable errors, then tries the fallback.
// The response names the provider that actually answered.
import { LlmError, type LlmProvider, type LlmRequest, type LlmResponse } from './types.ts';

export function createResilientLlm(o: { primary: LlmProvider; fallback?: LlmProvider; retries: number; onAttemptFailed?: (provider: string, err: unknown) => void }): LlmProvider {
  const attempt = async (provider: LlmProvider, req: LlmRequest, retries: number): Promise<LlmResponse> => {
    for (let i = 0; ; i++) {
      try {
        return await provider.complete(req);
      } catch (err) {
        o.onAttemptFailed?.(provider.name, err);
        const retryable = err instanceof LlmError ? err.retryable : true;
        if (!retryable || i >= retries) throw err;
      }
    }
  };
  return {
    name: o.primary.name,
    model: o.primary.model,
    async complete(req) {
      try {
        return await attempt(o.primary, req, o.retries);
      } catch (err) {
        if (!o.fallback) throw err;
        return attempt(o.fallback, req, 0);
      }
    },
  };
}
