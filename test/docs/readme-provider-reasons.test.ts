/**
 * The DigitalHumanProvider's Ready reasons (`ProviderReason`, Events aside): each is set by the
 * operator's code and named in the README's provider section — a reason documented but never set
 * (or set but never documented) is caught here. "Set" is read from the sources: a reason no
 * non-test file of the provider operator names (`Reason.X` / `ProviderReason.X`) is set nowhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ProviderReason, SpecAppliedReason } from '../../packages/operators/src/operators/provider/api/constants.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const providerDir = join(root, 'packages/operators/src/operators/provider');

/** Reasons of Events and of Stalled=False, not of Ready. */
const NOT_READY_REASONS = new Set(['Created', 'Updated', 'LimitsUpdated', 'LimitsDriftRepaired', 'Deleted', 'InstanceAbandoned', 'AbandonRejected', 'NothingToClean', 'LateInstanceDeleted', 'NotStalled']);
const readyReasons = Object.values(ProviderReason).filter((r) => !NOT_READY_REASONS.has(r));

function sources(dir: string): string {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !/\.test(-support)?\.ts$|test-support/.test(e.name) && !(e.parentPath.endsWith('/api') && e.name === 'constants.ts'))
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

test('every Ready reason of a DigitalHumanProvider is set by the operator', () => {
  const code = sources(providerDir);
  const unset = readyReasons.filter((r) => !new RegExp(`\\b(Provider)?Reason\\.${r}\\b`).test(code));
  assert.deepEqual(unset, [], 'reasons no source of the provider operator sets');
});

test("every Ready reason of a DigitalHumanProvider is named in the README's provider section", () => {
  const start = readme.indexOf('## How the DigitalHumanProvider operator behaves');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const missing = readyReasons.filter((r) => !section.includes(`\`${r}\``));
  assert.deepEqual(missing, [], 'reasons the README does not name');
});

test("SpecApplied's reasons are set by the operator and named in the README's conditions table", () => {
  const code = sources(providerDir);
  const unset = Object.keys(SpecAppliedReason).filter((r) => !new RegExp(`\\bSpecAppliedReason\\.${r}\\b`).test(code));
  assert.deepEqual(unset, [], 'SpecApplied reasons no source of the provider operator sets');
  const start = readme.indexOf('## How the DigitalHumanProvider operator behaves');
  const row = readme.slice(start).split('\n').find((line) => line.trim().startsWith('| `SpecApplied` |')) ?? '';
  const missing = Object.values(SpecAppliedReason).filter((r) => !row.includes(`\`${r}\``));
  assert.deepEqual(missing, [], 'SpecApplied reasons the README table does not name');
});
