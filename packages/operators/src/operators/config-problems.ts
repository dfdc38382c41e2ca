/**
 * Configuration problems as a person reads them: one line per problem, the path in the file
 * (`microservice.defaults.replicas`, `provider.vendor.timeoutSeconds`, `items[0].name`), then what
 * is wrong, lower-case (`microservice: unexpected property`); a misspelt key gets the known key it
 * is closest to (`micrservice: unexpected property (did you mean "microservice"?)`).
 *
 * Used by every part of the operator configuration (the file, the platform defaults, the
 * provider section) so that `converge run --config` reports all problems at once, in one form.
 * Pure. A section is checked by the validator compiled from its schema (`compiled-checks/`), so a
 * valid file loads no schema and no TypeBox; an invalid one is explained by TypeBox's `Value`.
 * The edit distance behind "did you mean" is the ten-line Levenshtein below rather than a
 * dependency: it compares a key with the few known keys of one object, nothing more.
 * @module
 */
import type { TSchema } from '@sinclair/typebox';
import { passes, schemaOf, valueErrors } from './compiled-checks/index.ts';
import type { CheckName } from './compiled-checks/index.ts';

/** `/a/b/0/c` → `a.b[0].c` (with `prefix` in front, joined by a dot). */
export function configPath(pointer: string, prefix = ''): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  let out = prefix;
  for (const part of parts) out = /^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part;
  return out;
}

const TOP_LEVEL = '<top level>';

/**
 * A problem line of a section (`replicas: …`, or `<top level>: …` for the section itself) as a
 * line of the file around it: `microservice.defaults.replicas: …`, `microservice.defaults: …`.
 */
export function inSection(section: string, line: string): string {
  if (line.startsWith(`${TOP_LEVEL}:`)) return section + line.slice(TOP_LEVEL.length);
  return line.startsWith('[') ? section + line : `${section}.${line}`;
}

/** `schemaProblems` of the named compiled schema; `[]` at the cost of the compiled check alone when `value` is valid. */
export function checkedProblems(name: CheckName, value: unknown, prefix = ''): string[] {
  return passes(name, value) ? [] : schemaProblems(schemaOf(name), value, prefix);
}

/** Every problem TypeBox finds in `value` against `schema`, as `path: what` lines, without repeats. */
export function schemaProblems(schema: TSchema, value: unknown, prefix = ''): string[] {
  const out: string[] = [];
  for (const error of valueErrors(schema, value)) {
    const path = configPath(error.path, prefix) || TOP_LEVEL;
    let message = error.message.charAt(0).toLowerCase() + error.message.slice(1);
    if (message === 'unexpected property') {
      const key = error.path.slice(error.path.lastIndexOf('/') + 1);
      const known = Object.keys((error.schema as { properties?: Record<string, unknown> }).properties ?? {});
      const near = closest(key, known);
      if (near) message += ` (did you mean "${near}"?)`;
    }
    const line = `${path}: ${message}`;
    if (!out.includes(line)) out.push(line);
  }
  return out;
}

/** The known key within edit distance 2 (and less than half the key) of `key`, if one is. */
function closest(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (d <= 2 && d < Math.max(key.length, name.length) / 2 && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
