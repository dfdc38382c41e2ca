/**
 * A `node --test` reporter that writes one JSON line per failed test, for `npm test` to repeat
 * at the end of its output (scripts/failure-digest.ts reads the lines back).
 *
 * A custom reporter rather than the TAP copy: node's TAP reporter drops an error's `cause`, which
 * is where a fast-check failure keeps the assertion that failed ("Property failed after 36
 * tests" is the error; "call 0 … resolved on a body over the bound" its cause).
 *
 * Guarantees: a line for every test that failed on its own account (not a parent that failed
 * only because a subtest did, nor a test cancelled because its parent ended), with its parents'
 * names, its location, node's failure type, and the error's message followed by each cause's.
 * @module
 */
import { inspect } from 'node:util';
import type { FailureRecord } from './failure-digest.ts';

interface TestEventData {
  name: string;
  nesting: number;
  file?: string;
  line?: number;
  column?: number;
  details?: { error?: unknown };
}

const SKIPPED_FAILURE_TYPES = new Set(['subtestsFailed', 'cancelledByParent']);

export default async function* failureReporter(source: AsyncIterable<{ type: string; data: TestEventData }>): AsyncGenerator<string> {
  /** Per file, the names of the tests now running at each nesting level. */
  const running = new Map<string, string[]>();
  for await (const event of source) {
    if (event.type !== 'test:start' && event.type !== 'test:fail') continue;
    const { name, nesting, file = '', line, column } = event.data;
    const stack = running.get(file) ?? [];
    running.set(file, stack);
    if (event.type === 'test:start') {
      stack.length = nesting;
      stack[nesting] = name;
      continue;
    }
    const wrapper = event.data.details?.error as { failureType?: unknown; cause?: unknown } | undefined;
    const failureType = typeof wrapper?.failureType === 'string' ? wrapper.failureType : undefined;
    if (failureType !== undefined && SKIPPED_FAILURE_TYPES.has(failureType)) continue;
    const record: FailureRecord = {
      path: [...stack.slice(0, nesting), name],
      location: file ? `${file}${line === undefined ? '' : `:${line}:${column ?? 0}`}` : undefined,
      failureType,
      // node wraps what the test threw (ERR_TEST_FAILURE); the thrown error is its cause.
      error: errorText(wrapper?.cause ?? wrapper),
    };
    yield `${JSON.stringify(record)}\n`;
  }
}

/** The error's message, then `cause: …` for each error in its cause chain (at most 5). */
function errorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    const message = current instanceof Error || (typeof current === 'object' && 'message' in current) ? String((current as { message: unknown }).message) : inspect(current);
    parts.push(depth === 0 ? message : `cause: ${message}`);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.join('\n') || '(no error message)';
}
