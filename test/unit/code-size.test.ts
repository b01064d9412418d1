// The code standard's two sizes, kept: no source file over 450 lines, and no function over 80 lines of its own (its
// lines minus those of the functions written inside it, which are measured on their own). Read with the TypeScript
// parser over the shipped code: src/, machines/, sdk/src/ (and the Python SDK's files by line count).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_FILE_LINES = 450;
const MAX_OWN_FUNCTION_LINES = 80;
const ROOTS = ['src', 'machines', 'sdk/src'];

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('.') ? [] : filesUnder(path, ext);
    return ext.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

export interface LongFunction {
  name: string;
  line: number;
  ownLines: number;
}

/** Functions whose own lines (nested functions' lines taken out) exceed `max`. */
export function longFunctions(fileName: string, text: string, max = MAX_OWN_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const span = (n: ts.Node) => lineOf(n.getEnd()) - lineOf(n.getStart(source)) + 1;
  const found: LongFunction[] = [];
  const nestedLines = (node: ts.Node): number => {
    let lines = 0;
    node.forEachChild(function visit(child) {
      if (ts.isFunctionLike(child) && 'body' in child && child.body) lines += span(child);
      else child.forEachChild(visit);
    });
    return lines;
  };
  const nameOf = (n: ts.SignatureDeclaration): string => {
    if (n.name && ts.isIdentifier(n.name)) return n.name.text;
    const parent = n.parent;
    if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
    return '(anonymous)';
  };
  source.forEachChild(function visit(node) {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const own = span(node) - nestedLines(node.body);
      if (own > max) found.push({ name: nameOf(node), line: lineOf(node.getStart(source)) + 1, ownLines: own });
    }
    node.forEachChild(visit);
  });
  return found;
}

describe('code sizes', () => {
  it(`no source file is over ${MAX_FILE_LINES} lines`, () => {
    const files = [...ROOTS.flatMap((r) => filesUnder(r, /\.ts$/)), ...filesUnder('sdk-python/src', /\.py$/)];
    expect(files.length).toBeGreaterThan(100);
    const over = files.map((f) => ({ f, n: lineCount(readFileSync(f, 'utf8')) })).filter(({ n }) => n > MAX_FILE_LINES);
    expect(over.map(({ f, n }) => `${f}: ${n}`)).toEqual([]);
  });

  it(`no function is over ${MAX_OWN_FUNCTION_LINES} lines of its own`, () => {
    const over = ROOTS.flatMap((r) => filesUnder(r, /\.ts$/)).flatMap((f) =>
      longFunctions(f, readFileSync(f, 'utf8')).map((l) => `${f}:${l.line} ${l.name}: ${l.ownLines}`),
    );
    expect(over).toEqual([]);
  });

  it('a function counts its own lines, not those of the functions written inside it', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const outer = `function outer() {\n${body(50)}\n  function inner() {\n${body(60)}\n  }\n  return inner;\n}\n`;
    expect(longFunctions('x.ts', outer)).toEqual([]);
    const long = `const big = () => {\n${body(81)}\n};\n`;
    expect(longFunctions('x.ts', long)).toEqual([{ name: 'big', line: 1, ownLines: 83 }]);
  });
});
