// Issue 21: the README's SDK snippet compiles under strict TypeScript, against the published SDK package
// (@parley/sdk from sdk/dist, as an integrator gets it) and zod.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';

/** The first ```ts block under a README heading. */
export function snippetUnder(readme: string, heading: string): string {
  const section = readme.slice(readme.indexOf(`## ${heading}`));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error(`no ts block under "${heading}"`);
  return m[1];
}

function compile(code: string): string[] {
  // Inside the project, so `@parley/sdk` and `zod` resolve from its node_modules as they would in a backend.
  const dir = mkdtempSync(join(PROJECT_ROOT, '.tmp-snippet-'));
  try {
    const file = join(dir, 'snippet.mts');
    writeFileSync(file, code);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      skipLibCheck: true,
    });
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('README', () => {
  it('the SDK snippet compiles under strict', () => {
    const code = snippetUnder(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8'), 'Connecting your backend (SDK)');
    expect(code).toContain("from '@parley/sdk'");
    expect(compile(code)).toEqual([]);
  }, 60_000);

  it('a snippet with a type error does not (the check can fail)', () => {
    const errors = compile("import { createClient } from '@parley/sdk';\nconst p = createClient();\nawait p.listen({ url: 'x', secret: process.env.S });\n");
    expect(errors.join('\n')).toMatch(/undefined/);
  }, 60_000);
});
