import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readConfigText } from './config-text.ts';

test('YAML and JSON read as data; an empty file is null', () => {
  assert.deepEqual(readConfigText('a: 1\nb: [x, "y"]\n'), { ok: true, value: { a: 1, b: ['x', 'y'] } });
  assert.deepEqual(readConfigText('{"a": {"b": true}}'), { ok: true, value: { a: { b: true } } });
  assert.deepEqual(readConfigText('%YAML 1.2\n---\na: !!str 1\n'), { ok: true, value: { a: '1' } });
  assert.deepEqual(readConfigText(''), { ok: true, value: null });
});

test('broken YAML, or more than one document, is one problem with its line and column', () => {
  const read = readConfigText('a: 1\nb: [\n');
  assert.equal(read.ok, false);
  assert.equal(read.ok ? 0 : read.problems.length, 1);
  assert.match(read.ok ? '' : read.problems[0]!, /^not YAML or JSON: line \d+, column \d+: /);
  assert.equal(readConfigText('a: 1\n---\nb: 2\n').ok, false, 'a file of two documents');
});

test('every unknown tag and directive is a problem of its own, with where it is', () => {
  const read = readConfigText('%FOO bar\n---\na: !x 1\nb:\n  c: !y z\n');
  assert.deepEqual(read.ok ? [] : read.problems.map((p) => p.replace(/ \(the operator .*\)$/, '')), [
    'line 1, column 1: unknown directive %FOO',
    'line 3, column 4: unresolved tag !x',
    'line 5, column 6: unresolved tag !y',
  ]);
});
