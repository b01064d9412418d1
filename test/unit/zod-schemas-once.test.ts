// Guards a cost measured on the WhatsApp webhook: zod 4 compiles every object schema into a parser the first time
// it parses, so a schema built inside a function (`z.looseObject({ body: z.string() }).safeParse(m.text)`) is
// built and compiled again on every call. One such line in `contentOf` took the webhook from 6,285 to 2,934
// requests/s (the code generator, its garbage, and the tail it added to every acknowledgement).
// Schemas are module constants; the few functions that build one are named here, each called once per process
// (config helpers at module load) or once per registered tool (the SDK).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOTS = ['src', 'machines', 'sdk/src'];

const BUILT_ONCE = [
  'src/config/schema.ts:num',
  'src/config/schema.ts:bool',
  'src/config/schema.ts:optionalUrl',
  'src/config/schema.ts:sharedSecret',
  'src/conversations/routes.ts:digits',
  'sdk/src/schema.ts:prepareParameters',
  'src/config/schema.ts:httpUrl',
  'src/knowledge/schema.ts:count', // the list routes' query schemas, at module load
  // Not builders: they call z.prettifyError / z.toJSONSchema (once per scenario file, once per schema generation).
  'src/scenarios/loader.ts:loadScenario',
  'src/scenarios/loader.ts:loadSuite',
  'src/scenarios/schema.ts:scenarioJsonSchema',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

const nameOf = (fn: ts.SignatureDeclaration): string => {
  if (fn.name && ts.isIdentifier(fn.name)) return fn.name.text;
  const parent = fn.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
};

/** `file:function` of each function whose body calls `z.something(…)`, once per function. */
export function functionsBuildingSchemas(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const found = new Set<string>();
  const visit = (node: ts.Node, outermost: ts.SignatureDeclaration | undefined) => {
    const fn = outermost ?? (ts.isFunctionLike(node) ? node : undefined);
    const callee = ts.isCallExpression(node) ? node.expression : undefined;
    if (fn && callee && ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'z') {
      found.add(`${path}:${nameOf(fn)}`);
    }
    ts.forEachChild(node, (child) => visit(child, fn));
  };
  visit(source, undefined);
  return [...found];
}

describe('zod schemas', () => {
  it('the check finds the functions that build a schema, and only those', () => {
    const text = [
      'const Text = z.looseObject({ body: z.string() });',
      'export function contentOf(m) {',
      '  return z.looseObject({ body: z.string() }).safeParse(m.text);',
      '}',
      'const parse = (m) => Text.safeParse(m);',
      'const digits = (max) => z.string().pipe(z.number().max(max));',
      'const Refined = z.string().refine((v) => v.length > 1);',
    ].join('\n');
    expect(functionsBuildingSchemas('x.ts', text)).toEqual(['x.ts:contentOf', 'x.ts:digits']);
  });

  it('no runtime function builds a schema per call, but those built once', () => {
    const found = ROOTS.flatMap((root) => sourceFiles(root).flatMap((f) => functionsBuildingSchemas(f, readFileSync(f, 'utf8'))));
    expect(found.sort()).toEqual([...BUILT_ONCE].sort());
  });
});
