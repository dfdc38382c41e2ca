/**
 * The README's configuration block is a file `converge run --config` accepts, and its values are
 * the defaults (except the lines it marks as examples): a reader copying it gets what the README
 * says, not an exit 1 (it once named a CA file that does not exist, and the grace period under its
 * internal name).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { defaultOperatorConfig, operatorConfigProblems, parseOperatorConfig } from '../../packages/operators/src/operators/operator-config.ts';
import { defaultProviderConfig, parseProviderConfig } from '../../packages/operators/src/operators/provider/provider-config.ts';

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

function configBlock(): string {
  const from = readme.indexOf('`converge run --config <file>` (YAML)');
  assert.ok(from >= 0, 'the README documents the configuration file');
  const start = readme.indexOf('```yaml\n', from) + '```yaml\n'.length;
  return readme.slice(start, readme.indexOf('```', start));
}

test("the README's configuration block is accepted, and holds the defaults but the lines marked as examples", () => {
  const raw = parse(configBlock()) as Record<string, Record<string, Record<string, unknown>>>;
  assert.deepEqual(operatorConfigProblems(raw), []);
  const parsed = parseOperatorConfig(raw, 'README.md');
  const withoutExamples = { ...parsed, microservice: { ...parsed.microservice, defaults: { ...parsed.microservice.defaults, labels: defaultOperatorConfig.microservice.defaults.labels } } };
  assert.deepEqual({ ...withoutExamples, provider: {} }, defaultOperatorConfig);
  assert.deepEqual(parseProviderConfig(parsed.provider), defaultProviderConfig, 'the provider section');
  assert.equal(/`shutdownGraceMs`/.test(readme), false, 'the file key is shutdownGraceSeconds');
});
