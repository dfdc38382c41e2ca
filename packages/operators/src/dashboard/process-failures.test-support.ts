/**
 * Test support for this folder's tests (`*.test-support.ts`: left out of the published build):
 * what escaped while a test ran, as the process saw it.
 * @module
 */
import type { TestContext } from 'node:test';

/** Collects unhandled rejections and uncaught exceptions until the test ends. */
export function watchFailures(t: TestContext): unknown[] {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', listener);
  process.on('uncaughtException', listener);
  t.after(() => {
    process.off('unhandledRejection', listener);
    process.off('uncaughtException', listener);
  });
  return seen;
}
