// The metrics read at scrape time rather than counted from the telemetry stream: gauges of the live state (actors,
// SDK connections, queue depths, conversations with a person), the webhook delivery counters (each scrape adds what
// happened since the last one) and the event loop's delay since the last scrape.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { HandoffGauges } from './handoff-metrics.ts';
import type { HealthGauges } from './health-metrics.ts';

export interface MetricsGauges extends HealthGauges, HandoffGauges {
  activeConversations?(): number;
  sdkConnections?(): number;
  whatsappQueueDepth?(): { inbound: number; outbound: number };
  /** Conversations a person has now (human handoff). */
  withHuman?(): number;
  /** Outbound webhook deliveries since start, and deliveries waiting or running. */
  webhooks?(): { delivered: number; failedAttempts: number; dead: number; depth: number };
  /** The clock handoff waits are measured with (the injected one). */
  now?(): number;
}

export function createScrapeMetrics(registry: Registry, gauges: MetricsGauges): { close(): void } {
  const LAG_RESOLUTION_MS = 10;
  const loop = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  loop.enable();
  // The histogram records whole timer intervals (at least the resolution): report the delay beyond it.
  const lagSeconds = (ns: number) => Math.max(0, ns / 1e6 - LAG_RESOLUTION_MS) / 1000;

  new Gauge({
    name: 'parley_active_conversations',
    help: 'Active (in-memory) conversation actors',
    registers: [registry],
    collect() {
      this.set(gauges.activeConversations?.() ?? 0);
    },
  });
  new Gauge({
    name: 'parley_sdk_connections',
    help: 'Open SDK connections',
    registers: [registry],
    collect() {
      this.set(gauges.sdkConnections?.() ?? 0);
    },
  });
  new Gauge({
    name: 'parley_whatsapp_queue_depth',
    help: 'WhatsApp jobs waiting or running',
    labelNames: ['queue'],
    registers: [registry],
    collect() {
      const d = gauges.whatsappQueueDepth?.() ?? { inbound: 0, outbound: 0 };
      this.set({ queue: 'inbound' }, d.inbound);
      this.set({ queue: 'outbound' }, d.outbound);
    },
  });
  new Gauge({
    name: 'parley_conversations_with_human',
    help: 'Conversations a person has now',
    registers: [registry],
    collect() {
      this.set(gauges.withHuman?.() ?? 0);
    },
  });
  // Read from the delivery counters at scrape time: each scrape adds what happened since the last one.
  const seen = { delivered: 0, failedAttempts: 0, dead: 0 };
  new Counter({
    name: 'parley_webhook_deliveries_total',
    help: 'Outbound webhook deliveries: delivered (2xx), failed attempts (retried), dead-lettered',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const c = gauges.webhooks?.();
      if (!c) return;
      for (const [key, outcome] of [
        ['delivered', 'delivered'],
        ['failedAttempts', 'failed_attempt'],
        ['dead', 'dead'],
      ] as const) {
        this.inc({ outcome }, c[key] - seen[key]);
        seen[key] = c[key];
      }
    },
  });
  new Gauge({
    name: 'parley_webhook_queue_depth',
    help: 'Outbound webhook deliveries waiting (retrying) or running',
    registers: [registry],
    collect() {
      this.set(gauges.webhooks?.().depth ?? 0);
    },
  });
  new Gauge({
    name: 'parley_event_loop_lag_seconds',
    help: 'Event-loop delay since the last scrape',
    labelNames: ['quantile'],
    registers: [registry],
    collect() {
      this.set({ quantile: '0.5' }, lagSeconds(loop.percentile(50)));
      this.set({ quantile: '0.99' }, lagSeconds(loop.percentile(99)));
      this.set({ quantile: 'max' }, lagSeconds(loop.max));
      loop.reset();
    },
  });

  return { close: () => loop.disable() };
}
