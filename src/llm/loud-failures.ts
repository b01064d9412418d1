// LLM failures that no retry can fix — the endpoint refused the key (401), the key may not use it
// (403), the model or the URL does not exist (404) — are a misconfiguration, not bad luck, and
// every turn would quietly fall back or apologise. So they are loud:
//  - one error line per distinct cause (provider, model, status, the provider's own message), not
//    one per turn; the same cause is logged again only after that provider has answered once;
//  - an `error` telemetry event for every such failure (so `parley_errors_total` counts them);
//  - `/ready` shows the last one in `checks.llm` (status `degraded`, still HTTP 200: every node
//    shares the LLM, so taking this one out of a load balancer would help nobody) until that
//    provider answers again.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Telemetry } from '../services.ts';
import { LlmError } from './types.ts';

export const LOUD_STATUSES: ReadonlySet<number> = new Set([401, 403, 404]);

export interface LlmFailureWatch {
  /** For `createResilientLlm`'s process-wide observer. */
  failed(provider: string, err: unknown, model: string): void;
  succeeded(provider: string, model: string): void;
  /** `ok`, or the last loud failure of a provider that has not answered since. */
  check(): string;
}

interface Failure {
  status: number;
  message: string;
  at: number;
  count: number;
}

export function createLlmFailureWatch(o: { logger: Logger; telemetry: Telemetry; clock: Clock; scrub: (text: string) => string }): LlmFailureWatch {
  const log = o.logger.child({ component: 'llm' });
  /** Per provider and model: its last loud failure, while it has not answered since. */
  const failing = new Map<string, Failure>();
  /** Causes already logged, per provider and model, since it last answered. */
  const logged = new Map<string, Set<string>>();
  const keyOf = (provider: string, model: string) => `${provider}\u0000${model}`;

  return {
    failed(provider, err, model) {
      if (!(err instanceof LlmError) || !err.code.startsWith('http_')) return;
      const status = Number(err.code.slice(5));
      if (!LOUD_STATUSES.has(status)) return;
      const message = o.scrub(err.message);
      const key = keyOf(provider, model);
      const at = o.clock.now();
      const previous = failing.get(key);
      failing.set(key, { status, message, at, count: (previous?.count ?? 0) + 1 });
      o.telemetry.event({ type: 'error', data: { where: 'llm', provider, model, status, message } });
      let causes = logged.get(key);
      if (!causes) logged.set(key, (causes = new Set()));
      const cause = `${status}\u0000${message}`;
      if (causes.has(cause)) return;
      causes.add(cause);
      log.error(
        { provider, model, status, providerMessage: message },
        `the LLM endpoint refused the request (HTTP ${status}): check llm.api_key, llm.base_url and llm.model; logged once per cause until it answers again`,
      );
    },
    succeeded(provider, model) {
      const key = keyOf(provider, model);
      if (!failing.has(key) && !logged.has(key)) return;
      failing.delete(key);
      logged.delete(key);
      log.info({ provider, model }, 'the LLM endpoint answers again');
    },
    check() {
      let last: [string, Failure] | undefined;
      for (const entry of failing) if (!last || entry[1].at >= last[1].at) last = entry;
      if (!last) return 'ok';
      const [key, f] = last;
      const [provider, model] = key.split('\u0000');
      return `failing: ${provider} (${model}) answered HTTP ${f.status}, ${f.count} time${f.count === 1 ? '' : 's'}, last at ${new Date(f.at).toISOString()}: ${f.message}`;
    },
  };
}
