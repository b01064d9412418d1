// A strict parser of the Prometheus text exposition format (0.0.4), for tests:
// every line must be a HELP, a TYPE, a blank line or a sample of a declared family.
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface PromFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: PromSample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (\\S+)(?: (-?\\d+))?$`);
// NaN and Inf in any case, as Prometheus reads them (Go's ParseFloat): prom-client writes "Nan" (e.g. the default
// metrics' event-loop mean before the first sample).
const VALUE = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf|nan)$/i;

function parseValue(v: string, line: number): number {
  if (!VALUE.test(v)) throw new Error(`line ${line}: bad value ${JSON.stringify(v)}`);
  if (/^nan$/i.test(v)) return NaN;
  return /inf$/i.test(v) ? (v.startsWith('-') ? -Infinity : Infinity) : Number(v);
}

function familyOf(sample: string, families: Map<string, PromFamily>): PromFamily | undefined {
  if (families.has(sample)) return families.get(sample);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sample.endsWith(suffix)) continue;
    const f = families.get(sample.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || f.type === 'summary')) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((raw, i) => {
    const n = i + 1;
    if (raw === '') return;
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(raw))) {
      const f = families.get(m[1]) ?? { name: m[1], type: 'untyped' as const, help: '', samples: [] };
      f.help = m[2];
      families.set(m[1], f);
    } else if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(raw))) {
      const f = families.get(m[1]) ?? { name: m[1], type: 'untyped' as const, help: '', samples: [] };
      if (f.samples.length) throw new Error(`line ${n}: TYPE after samples of ${m[1]}`);
      f.type = m[2] as PromFamily['type'];
      families.set(m[1], f);
    } else if (raw.startsWith('#')) {
      throw new Error(`line ${n}: unexpected comment ${JSON.stringify(raw)}`);
    } else if ((m = SAMPLE.exec(raw))) {
      const f = familyOf(m[1], families);
      if (!f) throw new Error(`line ${n}: sample of undeclared family ${m[1]}`);
      const labels: Record<string, string> = {};
      for (const l of (m[2] ?? '').matchAll(new RegExp(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`, 'g'))) {
        if (l[1] in labels) throw new Error(`line ${n}: duplicate label ${l[1]}`);
        labels[l[1]] = l[2].replace(/\\(["\\n])/g, (_s, c: string) => (c === 'n' ? '\n' : c));
      }
      f.samples.push({ name: m[1], labels, value: parseValue(m[3], n) });
    } else {
      throw new Error(`line ${n}: not Prometheus text: ${JSON.stringify(raw)}`);
    }
  });
  return families;
}

/** The value of one sample, matched by name and (a subset of) labels; undefined if absent. */
export function sampleValue(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families.values())
    for (const s of f.samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
  return undefined;
}
