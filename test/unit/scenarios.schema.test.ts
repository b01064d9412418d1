// The scenario file's schema: the JSON Schema editors read (docs/scenario.schema.json) is the one the zod schema
// generates today, and the examples the README shows parse.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { Scenario, scenarioJsonSchema } from '../../src/scenarios/schema.ts';

describe('scenario schema', () => {
  it('docs/scenario.schema.json is current (regenerate: npx tsx scripts/scenario-schema.ts)', () => {
    const committed = JSON.parse(readFileSync(join(PROJECT_ROOT, 'docs/scenario.schema.json'), 'utf8'));
    expect(committed).toEqual(scenarioJsonSchema());
  });

  it('parses every example scenario, and each names the schema for editors', () => {
    const dir = join(PROJECT_ROOT, 'examples/scenarios');
    const files = readdirSync(dir).filter((f) => f.endsWith('.scenario.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=../../docs/scenario.schema.json');
      expect(Scenario.safeParse(parse(text)).success, f).toBe(true);
    }
  });

  it('refuses a scenario without steps or simulate, an unknown key, an unknown confirmation', () => {
    const customer = { externalId: 'c-1' };
    expect(Scenario.safeParse({ name: 'x', customer }).success).toBe(false);
    expect(Scenario.safeParse({ name: 'x', customer, steps: [{ customer: 'hi', extra: 1 }] }).success).toBe(false);
    expect(Scenario.safeParse({ name: 'x', customer, steps: [{ expect: { tool: 'a', confirmation: 'maybe' } }] }).success).toBe(false);
    const ok = Scenario.parse({ name: 'x', customer, simulate: { persona: 'p', goal: 'g' } });
    expect(ok.customer).toEqual({ externalId: 'c-1', channel: 'web', verified: true });
    expect(ok.simulate!.max_turns).toBe(6);
  });
});
