// What `parley test` needs of its process: where to write, and the project's configuration.
import type { Config } from '../config/schema.ts';

export interface TestIo {
  out(text: string): void;
  err(text: string): void;
  loadConfig(): Config;
}
