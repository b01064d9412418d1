// vitest setupFiles: runs before each test file. Its afterAll runs after the file's own (hooks run as a stack), and
// kills the processes the file started outside its tests that are still running (support/child-processes.ts).
import { afterAll } from 'vitest';
import { killFileChildren } from './child-processes.ts';

afterAll(killFileChildren);
