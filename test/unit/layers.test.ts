// The floors of the house: imports go down the layers listed in src/README.md ("## Layers"), never up; no circle of
// files (in src/, machines/, sdk/src/, bench/ and the browser code: widget/src/, inbox/src/, dashboard/src/) nor of
// folders of src/; machines/ imports only xstate; sdk/src/ only ws, zod and node: modules; nothing outside src/store/
// imports an engine (src/store/lmdb/, src/store/postgres/). The layer list is read from the README, so the documented
// list is the rule. Every import is read with the TypeScript parser: import and export … from, import type, dynamic
// import() and import('…') types.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Imports allowed although they break a rule, each with why. Only in files other engineers are changing in this
 * round; an entry that no longer matches an import fails the test, so the list only shrinks.
 */
const ALLOWED: Record<string, string> = {};

export interface Layer {
  name: string;
  /** Paths under src/: `dir/` for a folder, `file.ts` for a file. */
  members: string[];
}

/** The layers, top first, from the fenced block under "## Layers" in src/README.md (`name: member member …`). */
export function readLayers(readme: string): Layer[] {
  const section = readme.split(/^## Layers\s*$/m)[1];
  if (!section) throw new Error('src/README.md has no "## Layers" section');
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('the "## Layers" section has no fenced block');
  return block
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      const m = /^([a-z-]+):\s+(.+)$/.exec(line.trim());
      if (!m) throw new Error(`not a layer line: ${line}`);
      return { name: m[1], members: m[2].split(/\s+/) };
    });
}

/** The index (0 = top) of the layer that holds a src/ file; -1 when none does. The longest member wins. */
export function layerIndex(layers: Layer[], file: string): number {
  const rel = file.slice('src/'.length);
  let best = -1;
  let bestLength = -1;
  layers.forEach((layer, i) => {
    for (const m of layer.members) {
      const hit = m.endsWith('/') ? rel.startsWith(m) : rel === m;
      if (hit && m.length > bestLength) [best, bestLength] = [i, m.length];
    }
  });
  return best;
}

/** Every module a file names: import/export … from, import type, dynamic import(), import('…') types. */
export function importsOf(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const e = node.moduleReference.expression;
      found.push(ts.isStringLiteral(e) ? e.text : '<expression>');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      // A module named by an expression cannot be checked: name it with a string literal.
      found.push(arg && ts.isStringLiteralLike(arg) ? arg.text : '<expression>');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A specifier as a path from the repository root (relative ones resolved; `.js` read as `.ts`), else as written. */
export function resolve(from: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  return posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts');
}

export type Edge = [from: string, to: string];

/** Each circle (strongly connected set of more than one node) of a graph, its nodes sorted. */
export function circles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const [a, b] of edges) {
    if (a === b) continue;
    next.set(a, [...(next.get(a) ?? []), b]);
    if (!next.has(b)) next.set(b, []);
  }
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  for (const root of next.keys()) {
    if (index.has(root)) continue;
    const work: [string, number][] = [[root, 0]];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1];
      const [v, i] = top;
      const out = next.get(v)!;
      if (i < out.length) {
        top[1]++;
        const w = out[i];
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === index.get(v)) {
        const set: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          set.push(w);
        } while (w !== v);
        if (set.length > 1) found.push(set.sort());
      }
    }
  }
  return found;
}

/** The folder a src/ file counts under for folder circles: its first folder below src/, or the file itself. */
export const folderOf = (file: string) => {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : file;
};

const ENGINES = ['src/store/lmdb/', 'src/store/postgres/'];
/** The files whose imports of each other must make no circle. */
const LOCAL = /^(src|machines|sdk\/src|bench|widget\/src|inbox\/src|dashboard\/src)\//;

export interface Findings {
  unplaced: string[];
  upward: string[];
  machines: string[];
  sdk: string[];
  engines: string[];
  storeImportsAbove: string[];
  fileCircles: string[][];
  folderCircles: string[][];
}

/** Checks a graph of imports (from, to: repository paths or package names) against the layers. */
export function check(layers: Layer[], files: string[], imports: Edge[], allowed: Set<string>): Findings {
  const kept = imports.filter(([a, b]) => !allowed.has(`${a} -> ${b}`));
  const inSrc = ([a, b]: Edge) => a.startsWith('src/') && b.startsWith('src/');
  const local = ([a, b]: Edge) => LOCAL.test(a) && LOCAL.test(b);
  const storeIndex = layers.findIndex((l) => l.members.includes('store/'));
  const show = ([a, b]: Edge) => `${a} -> ${b}`;
  return {
    unplaced: files.filter((f) => f.startsWith('src/') && layerIndex(layers, f) < 0),
    upward: kept.filter((e) => inSrc(e) && layerIndex(layers, e[1]) < layerIndex(layers, e[0])).map(show),
    machines: kept.filter(([a, b]) => a.startsWith('machines/') && b !== 'xstate' && !b.startsWith('machines/')).map(show),
    sdk: kept.filter(([a, b]) => a.startsWith('sdk/src/') && !['ws', 'zod'].includes(b) && !b.startsWith('node:') && !b.startsWith('sdk/src/')).map(show),
    // Benchmarks, like tests, may measure an engine's internals.
    engines: kept.filter(([a, b]) => /^(src|machines)\//.test(a) && !a.startsWith('src/store/') && ENGINES.some((e) => b.startsWith(e))).map(show),
    storeImportsAbove: kept
      .filter((e) => inSrc(e) && e[0].startsWith('src/store/') && !e[1].startsWith('src/store/') && layerIndex(layers, e[1]) <= storeIndex)
      .map(show),
    fileCircles: circles(kept.filter(local)),
    folderCircles: circles(kept.filter(inSrc).map(([a, b]) => [folderOf(a), folderOf(b)])),
  };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path.split('\\').join('/')] : [];
  });
}

const NONE: Findings = { unplaced: [], upward: [], machines: [], sdk: [], engines: [], storeImportsAbove: [], fileCircles: [], folderCircles: [] };

describe('layers', () => {
  const layers = readLayers(readFileSync('src/README.md', 'utf8'));
  const files = ['src', 'machines', 'sdk/src', 'bench', 'widget/src', 'inbox/src', 'dashboard/src'].flatMap(sourceFiles);
  const imports: Edge[] = files.flatMap((f) => importsOf(f, readFileSync(f, 'utf8')).map((s): Edge => [f, resolve(f, s)]));
  // A module named by an expression cannot be checked (bench/rate-load-child.ts loads the generator a parent names).
  const unread = imports.filter(([a, b]) => b === '<expression>' && !a.startsWith('bench/')).map(([a]) => a);

  it('the checks find each kind of violation (a small made-up house)', () => {
    const made: Layer[] = [
      { name: 'top', members: ['app.ts', 'feature/'] },
      { name: 'store', members: ['store/'] },
      { name: 'base', members: ['clock.ts'] },
    ];
    const found = check(
      made,
      ['src/app.ts', 'src/feature/a.ts', 'src/feature/b.ts', 'src/store/repos.ts', 'src/store/model.ts', 'src/clock.ts', 'src/stray.ts'],
      [
        ['src/app.ts', 'src/store/lmdb/index.ts'],
        ['src/store/repos.ts', 'src/feature/a.ts'],
        ['src/clock.ts', 'src/store/repos.ts'],
        ['src/feature/a.ts', 'src/feature/b.ts'],
        ['src/feature/b.ts', 'src/feature/a.ts'],
        ['src/feature/b.ts', 'src/store/model.ts'],
        ['src/feature/a.ts', 'src/app.ts'],
        ['machines/m.ts', 'fastify'],
        ['machines/m.ts', 'xstate'],
        ['sdk/src/client.ts', 'src/clock.ts'],
        ['src/store/open.ts', 'src/store/postgres/store.ts'],
        ['bench/lib.ts', 'bench/rounds.ts'],
        ['bench/rounds.ts', 'bench/lib.ts'],
        ['bench/lib.ts', 'src/app.ts'],
        ['bench/lib.ts', 'src/store/lmdb/kv.ts'],
      ],
      new Set(['src/feature/a.ts -> src/app.ts']),
    );
    expect(found).toEqual({
      unplaced: ['src/stray.ts'],
      upward: ['src/store/repos.ts -> src/feature/a.ts', 'src/clock.ts -> src/store/repos.ts'],
      machines: ['machines/m.ts -> fastify'],
      sdk: ['sdk/src/client.ts -> src/clock.ts'],
      engines: ['src/app.ts -> src/store/lmdb/index.ts'],
      storeImportsAbove: ['src/store/repos.ts -> src/feature/a.ts'],
      fileCircles: [
        ['src/feature/a.ts', 'src/feature/b.ts'],
        ['bench/lib.ts', 'bench/rounds.ts'],
      ],
      folderCircles: [['src/feature/', 'src/store/']],
    } satisfies Findings);
    expect(
      circles([
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'a'],
        ['c', 'd'],
      ]),
    ).toEqual([['a', 'b', 'c']]);
  });

  it('reads every kind of import', () => {
    const text = [
      "import a from './a.ts';",
      "import type { B } from '../b.ts';",
      "export { c } from './c.js';",
      "export * from 'pkg';",
      "const d = await import('./d.ts');",
      "let e: import('./e.ts').E;",
      'const f = await import(name);',
    ].join('\n');
    expect(importsOf('src/x/y.ts', text).map((s) => resolve('src/x/y.ts', s))).toEqual([
      'src/x/a.ts',
      'src/b.ts',
      'src/x/c.ts',
      'pkg',
      'src/x/d.ts',
      'src/x/e.ts',
      '<expression>',
    ]);
  });

  it('src/README.md lists the layers, and every file of src/ is on one', () => {
    expect(layers.map((l) => l.name)).toEqual(['composition', 'features', 'conversations', 'domain', 'services', 'store', 'base']);
    expect(check(layers, files, imports, new Set(Object.keys(ALLOWED))).unplaced).toEqual([]);
  });

  it('no import runs up a layer, no circle, machines/ and sdk/src/ import only their packages, engines only from src/store/', () => {
    const found = check(layers, files, imports, new Set(Object.keys(ALLOWED)));
    expect(unread).toEqual([]);
    expect(found).toEqual(NONE);
  });

  it('every allowed exception is still an import (the list only shrinks)', () => {
    const present = new Set(imports.map(([a, b]) => `${a} -> ${b}`));
    expect(Object.keys(ALLOWED).filter((k) => !present.has(k))).toEqual([]);
  });
});
