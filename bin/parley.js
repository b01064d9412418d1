#!/usr/bin/env node
// `npx parley …` in a checkout: the same command as `npm run parley -- …` (src/main.ts through tsx, no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
