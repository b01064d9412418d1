// Writes docs/errors.md from the error catalogue (sdk/src/error-codes.ts), as prettier lays it out.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'prettier';
import { PROJECT_ROOT } from '../src/config/load.ts';
import { errorCatalogueMarkdown } from '../src/http/error-docs.ts';

const file = join(PROJECT_ROOT, 'docs/errors.md');
writeFileSync(file, await format(errorCatalogueMarkdown(), { filepath: file }));
