// Guards a V8 slow path measured on this Node (20.x, V8 11.3): an object literal that starts with a
// spread and goes on (`{ ...base, kind: 'text' }`, `{ ...a, ...b }`) gets a fresh hidden class per
// object once the code is optimised. Each costs ~0.4–1 µs instead of ~0.02 µs, and code reading
// them (msgpack, zod, JSON) goes megamorphic: the WhatsApp webhook spent ~15% of its CPU on this.
// A literal that starts with a property (`{ kind: 'text', ...base }`) or Object.assign keeps one shape.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOTS = ['src', 'machines', 'sdk/src'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `file:line` of each object literal that starts with a spread and has more after it. */
export function spreadThenMore(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node)) {
      if (node.properties.length > 1 && ts.isSpreadAssignment(node.properties[0])) {
        found.push(`${path}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('object literals', () => {
  it('the check finds literals that start with a spread and go on, and only those', () => {
    expect(
      spreadThenMore(
        'x.ts',
        'const a = { ...b, c: 1 };\nconst d = { c: 1, ...b, ...e };\nconst e = { ...b, ...(f ? { g } : {}) };\nconst h = {\n  ...b,\n  i,\n};\nconst j = { ...b };',
      ),
    ).toEqual(['x.ts:1', 'x.ts:3', 'x.ts:4']);
  });

  it('no literal in the runtime code starts with a spread and goes on', () => {
    const found = ROOTS.flatMap((root) => sourceFiles(root).flatMap((f) => spreadThenMore(f, readFileSync(f, 'utf8'))));
    expect(found).toEqual([]);
  });
});
