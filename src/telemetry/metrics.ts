// Prometheus metrics (prom-client), one registry per Parley instance, fed by
// the telemetry stream plus gauges read at scrape time.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { createHealthMetrics } from './health-metrics.ts';
import { createHandoffMetrics } from './handoff-metrics.ts';
import { createOutcomeMetrics } from './outcome-metrics.ts';
import { createScrapeMetrics, type MetricsGauges } from './scrape-metrics.ts';
import type { Telemetry } from './types.ts';

export type { MetricsGauges } from './scrape-metrics.ts';

export function createMetrics(telemetry: Telemetry, gauges: MetricsGauges = {}) {
  const registry = new Registry();
  const health = createHealthMetrics(registry, { now: gauges.now ?? Date.now, gauges });
  const handoffMetrics = createHandoffMetrics(registry, gauges);
  // The process metrics every Node exporter has (CPU, resident memory, heap, GC, handles, open fds, start time).
  collectDefaultMetrics({ register: registry });
  const turns = new Counter({ name: 'parley_turns_total', help: 'Conversation turns completed', labelNames: ['channel'], registers: [registry] });
  const turnDuration = new Histogram({
    name: 'parley_turn_duration_seconds',
    help: 'Turn duration, customer message to reply',
    labelNames: ['channel'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  const llmDuration = new Histogram({
    name: 'parley_llm_call_duration_seconds',
    help: 'LLM call latency',
    labelNames: ['model', 'purpose'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  const llmTokens = new Counter({ name: 'parley_llm_tokens_total', help: 'LLM tokens', labelNames: ['model', 'kind'], registers: [registry] });
  const llmCost = new Counter({
    name: 'parley_llm_cost_total',
    help: 'What LLM calls cost, in telemetry.currency (llm.prices); calls of a model without a price are not counted',
    labelNames: ['model'],
    registers: [registry],
  });
  const whatsappCost = new Counter({
    name: 'parley_whatsapp_cost_total',
    help: 'What billable WhatsApp messages cost, in telemetry.currency (channels.whatsapp.prices), by Meta pricing category',
    labelNames: ['category'],
    registers: [registry],
  });
  const llmCalls = new Counter({ name: 'parley_llm_calls_total', help: 'LLM calls', labelNames: ['model', 'purpose', 'outcome'], registers: [registry] });
  const tools = new Counter({ name: 'parley_tool_calls_total', help: 'SDK tool calls', labelNames: ['name', 'outcome'], registers: [registry] });
  const proactive = new Counter({ name: 'parley_proactive_total', help: 'Proactive requests', labelNames: ['outcome', 'reason'], registers: [registry] });
  const delivery = new Counter({ name: 'parley_whatsapp_delivery_total', help: 'WhatsApp delivery states', labelNames: ['status'], registers: [registry] });
  const unusable = new Counter({
    name: 'parley_whatsapp_unusable_total',
    help: 'WhatsApp webhook parts Parley could not use (acknowledged, logged, not acted on)',
    labelNames: ['part', 'type'],
    registers: [registry],
  });
  const waEvents = new Counter({
    name: 'parley_whatsapp_events_total',
    help: 'WhatsApp events that start no turn',
    labelNames: ['event'],
    registers: [registry],
  });
  const messages = new Counter({ name: 'parley_messages_total', help: 'Messages', labelNames: ['channel', 'direction'], registers: [registry] });
  const confirmations = new Counter({ name: 'parley_confirmations_total', help: 'Write confirmations', labelNames: ['outcome'], registers: [registry] });
  const errors = new Counter({ name: 'parley_errors_total', help: 'Errors recorded in telemetry', registers: [registry] });
  const toolsUnavailable = new Counter({
    name: 'parley_tools_unavailable_total',
    help: 'Turns that ran without the backend functions (no SDK registered; a resumed turn waited sdk.resume_grace_seconds)',
    registers: [registry],
  });
  const handoffs = new Counter({
    name: 'parley_handoffs_total',
    help: 'Conversations handed to a person, and given back',
    labelNames: ['event'],
    registers: [registry],
  });
  const scrape = createScrapeMetrics(registry, gauges);

  // prom-client hashes a label object on every call; keep the bound children.
  const bound = new Map<string, { inc(v?: number): void; observe(v: number): void }>();
  const child = (metric: { labels(...v: string[]): unknown }, name: string, ...values: string[]) => {
    const key = `${name}\u0000${values.join('\u0000')}`;
    let c = bound.get(key);
    if (!c) bound.set(key, (c = metric.labels(...values) as { inc(v?: number): void; observe(v: number): void }));
    return c;
  };
  const outcomes = createOutcomeMetrics(registry);
  const unsubscribe = telemetry.subscribe({
    event(e) {
      health.event(e);
      handoffMetrics.event(e);
      if (e.type.startsWith('conversation.')) return outcomes(e);
      const d = e.data as Record<string, unknown>;
      const type = e.type;
      if (type === 'message.in' || type === 'message.out') child(messages, 'm', e.channel ?? 'unknown', type.slice(8)).inc();
      else if (type === 'turn.ended') {
        const channel = e.channel ?? 'unknown';
        child(turns, 'turns', channel).inc();
        if (typeof d.startedAt === 'number') child(turnDuration, 'td', channel).observe(Math.max(0, e.at - d.startedAt) / 1000);
      } else if (type === 'tool.result' || type === 'tool.failed') child(tools, 't', String(d.name), type === 'tool.result' ? 'ok' : 'failed').inc();
      else if (type === 'proactive.accepted') child(proactive, 'p', 'accepted', '').inc();
      else if (type === 'proactive.blocked' || type === 'proactive.failed') child(proactive, 'p', type.slice(10), String(d.reason ?? '')).inc();
      else if (type === 'whatsapp.status') {
        child(delivery, 'd', String(d.status)).inc();
        if (typeof d.cost === 'number' && d.cost > 0)
          child(whatsappCost, 'wc', String((d.pricing as { category?: unknown } | undefined)?.category ?? 'unknown')).inc(d.cost);
      } else if (type === 'whatsapp.outbound' && (d.status === 'accepted' || d.status === 'failed')) child(delivery, 'd', String(d.status)).inc();
      else if (type === 'whatsapp.unusable') child(unusable, 'u', String(d.part), String(d.partType)).inc(typeof d.count === 'number' ? d.count : 1);
      else if (type === 'whatsapp.event') child(waEvents, 'we', String(d.event)).inc();
      else if (type === 'whatsapp.identity') child(waEvents, 'we', 'identity').inc();
      else if (type.startsWith('confirmation.')) child(confirmations, 'c', type.slice(13)).inc();
      else if (type === 'handoff.requested' || type === 'handoff.released') child(handoffs, 'h', type.slice(8)).inc();
      else if (type === 'error') {
        errors.inc();
        if (d.code === 'tools_unavailable') toolsUnavailable.inc();
      } else if (type === 'tools.unavailable') toolsUnavailable.inc();
    },
    turnCall(c) {
      health.turnCall(c);
      child(llmDuration, 'ld', c.model, c.purpose).observe(c.durationMs / 1000);
      child(llmCalls, 'calls', c.model, c.purpose, c.ok ? 'ok' : 'error').inc();
      if (c.promptTokens) child(llmTokens, 'tok', c.model, 'prompt').inc(c.promptTokens);
      if (c.completionTokens) child(llmTokens, 'tok', c.model, 'completion').inc(c.completionTokens);
      if (c.cachedPromptTokens) child(llmTokens, 'tok', c.model, 'cached_prompt').inc(c.cachedPromptTokens);
      if (c.cost) child(llmCost, 'cost', c.model).inc(c.cost);
    },
  });

  return {
    registry,
    async text() {
      return registry.metrics();
    },
    close() {
      unsubscribe();
      scrape.close();
    },
  };
}
