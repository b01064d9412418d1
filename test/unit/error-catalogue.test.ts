// The error catalogue (sdk/src/error-codes.ts) is the one list of codes: docs/errors.md is made from it, and every
// code it declares is raised somewhere in src/ (no entry outlives its last use). The compiler keeps the other half:
// HttpError, sendError and the widget's error frames take only catalogue codes.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'prettier';
import { describe, expect, it } from 'vitest';
import { HTTP_ERRORS, SDK_FRAME_ERRORS, WIDGET_FRAME_ERRORS } from '../../sdk/src/error-codes.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { errorCatalogueMarkdown } from '../../src/http/error-docs.ts';

const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });

describe('the error catalogue', () => {
  it('docs/errors.md is current (regenerate: npx tsx scripts/error-docs.ts)', async () => {
    const file = join(PROJECT_ROOT, 'docs/errors.md');
    expect(readFileSync(file, 'utf8')).toBe(await format(errorCatalogueMarkdown(), { filepath: file }));
  });

  it('every code it declares is used in src/ or the SDK', () => {
    const code = [...sources(join(PROJECT_ROOT, 'src')), ...sources(join(PROJECT_ROOT, 'sdk/src'))]
      .filter((f) => !f.endsWith('error-codes.ts'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const unused = [...Object.keys(HTTP_ERRORS), ...Object.keys(WIDGET_FRAME_ERRORS), ...Object.keys(SDK_FRAME_ERRORS)].filter((c) => !code.includes(`'${c}'`));
    expect(unused).toEqual([]);
  });
});
