import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import fc from 'fast-check';
import * as YAML from 'yaml';
import { printYaml } from './printed-yaml.ts';

/** Runs `print` and returns the process warnings it emitted (they are emitted on a later tick). */
async function warningsOf(print: () => void): Promise<string[]> {
  const seen: string[] = [];
  const listener = (w: Error) => void seen.push(`${w.name}: ${w.message}`);
  process.on('warning', listener);
  try {
    print();
    await turn();
    await turn();
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

// Values the CLI and the dashboard print come from the cluster (an annotation, a status message):
// any text. Deciding whether one needs quotes parses it; a `%` directive or a `!` tag at its start
// made the yaml package emit a YAMLWarning, which Node printed on the user's stderr (and in the
// dashboard's log), once per printed value.
test('printing a value that starts like a YAML directive or tag emits no process warning, and it reads back as itself', async () => {
  const odd = ['%as^bl `s x', '!R x', '{!!-G.` ', '%YAML 9.9', '!!binary x', '%TAG ! tag:x,2000:'];
  let text = '';
  const warnings = await warningsOf(() => {
    text = printYaml(YAML, { odd, nested: { annotation: '!R⁨AT~P' } });
  });
  assert.deepEqual(warnings, []);
  for (const version of ['1.1', '1.2'] as const) {
    const back = YAML.parse(text, { version }) as { odd: unknown[]; nested: { annotation: unknown } };
    assert.deepEqual(back.odd, odd, `read as YAML ${version}`);
    assert.equal(back.nested.annotation, '!R⁨AT~P');
  }
});

test('any string prints without a warning and reads back as itself under YAML 1.1 and 1.2 (fast-check)', async () => {
  const texts = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 24 }),
    fc.tuple(fc.constantFrom('%', '!', '!!', '&', '*', '?', '- ', '{', '[', '#', '@', '`', '|', '>'), fc.string({ maxLength: 12 })).map(([a, b]) => a + b),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(texts, { maxLength: 6 }), async (values) => {
      let text = '';
      const warnings = await warningsOf(() => {
        text = printYaml(YAML, { values });
      });
      assert.deepEqual(warnings, []);
      for (const version of ['1.1', '1.2'] as const) {
        assert.deepEqual((YAML.parse(text, { version }) as { values: unknown }).values, values, `read as YAML ${version}`);
      }
    }),
    { numRuns: 300 },
  );
});
