// The composition root (issue 31, part 5): the ports first, then every part, then each part's plugin registered in
// the order the parts start (fastify stops them in the reverse). src/README.md, "The composition root", has the order.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { components, type WiredComponents } from './components.ts';
import { createPorts } from './ports.ts';
import { makeParts } from './parts.ts';
import { registerParts } from './plugins.ts';
import type { Lifecycle } from './lifecycle.ts';

export { createLifecycle, type Lifecycle, type LifecycleStep } from './lifecycle.ts';
export { registerOps } from './ops-parts.ts';
export type { WiredComponents } from './components.ts';

export async function wireComponents(o: { app: FastifyInstance; services: Services; lifecycle: Lifecycle; url: () => string }): Promise<WiredComponents> {
  const parts = await makeParts(o.services, createPorts());
  await registerParts(o.app, o.services, parts, o.lifecycle, o.url);
  return components(parts);
}
