/**
 * The README's table of Microservice conditions lists exactly the reasons the operator can set,
 * per condition type and status (issue 18: the Progressing row had left out OwnershipConflict and
 * the other failures; Reconciling was missing). The reasons come from the pure condition builders
 * the reconciler uses (`conditions.ts`), so the table cannot drift from the code unnoticed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MICROSERVICE_CONDITION_REASONS } from '../../packages/operators/src/operators/microservice/index.ts';

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** `| \`Type\` | when | reasons |` rows of the table under "## How the Microservice operator behaves". */
function readmeReasons(): Record<string, { True: string[]; False: string[]; Unknown: string[] }> {
  const section = readme.slice(readme.indexOf('## How the Microservice operator behaves'));
  const table = section.slice(section.indexOf('| condition | True when | reasons |'));
  const out: Record<string, { True: string[]; False: string[]; Unknown: string[] }> = {};
  for (const line of table.split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split(' | ');
    const type = /`(\w+)`/.exec(cells[0] ?? '')?.[1];
    const reasons = (cells.at(-1) ?? '').replace(/\s*\|\s*$/, '').replace(/\([^)]*\)/g, '');
    const [known = '', whenUnknown = ''] = reasons.split(/Unknown:/);
    const [whenTrue, whenFalse = ''] = known.split(/False:/);
    const names = (text: string) => [...text.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
    if (type) out[type] = { True: names(whenTrue ?? ''), False: names(whenFalse), Unknown: names(whenUnknown) };
  }
  return out;
}

test("the README's condition table lists every reason the operator sets, and no other", () => {
  const documented = readmeReasons();
  const sorted = (r: Record<string, { True: string[]; False: string[]; Unknown: string[] }>) =>
    Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, { True: [...v.True].sort(), False: [...v.False].sort(), Unknown: [...v.Unknown].sort() }]));
  assert.deepEqual(sorted(documented), sorted(MICROSERVICE_CONDITION_REASONS));
});
