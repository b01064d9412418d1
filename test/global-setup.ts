// Builds the browser bundles before any test runs, so a direct `npx vitest run …`
// never tests a stale public/build/widget.js (esbuild: well under a second).
import { buildAssets } from '../scripts/build-assets.ts';

export default async function setup() {
  await buildAssets({ log: () => undefined });
}
