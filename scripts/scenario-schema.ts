// Writes docs/scenario.schema.json from the scenario file's zod schema (src/scenarios/schema.ts), as prettier lays it out.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'prettier';
import { PROJECT_ROOT } from '../src/config/load.ts';
import { scenarioJsonSchema } from '../src/scenarios/schema.ts';

const file = join(PROJECT_ROOT, 'docs/scenario.schema.json');
writeFileSync(file, await format(JSON.stringify(scenarioJsonSchema()), { filepath: file }));
