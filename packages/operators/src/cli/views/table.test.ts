import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTable, cell, truncate } from './table.ts';
import { colorEnabled, createStyle, stripAnsi, conditionColor } from './style.ts';
import { humanDuration, formatAge } from './age.ts';

test('renderTable aligns columns with three spaces and does not pad the last column', () => {
  const text = renderTable(['name', 'ready'], [['todo-api', 'True'], ['a', 'False']]);
  assert.equal(text, ['NAME       READY', 'todo-api   True', 'a          False'].join('\n'));
});

test('colours do not change alignment and are only emitted when enabled', () => {
  const rows = [[cell('x', 'green'), cell('True', 'red')], ['longer', 'False']];
  const plain = renderTable(['a', 'b'], rows);
  const coloured = renderTable(['a', 'b'], rows, createStyle(true));
  assert.notEqual(plain, coloured);
  assert.equal(stripAnsi(coloured), plain);
  assert.ok(coloured.includes('\u001b[32mx\u001b[39m      '), 'the padding is outside the colour');
  assert.ok(!plain.includes('\u001b['));
});

test('cells are cut at maxWidth and newlines become spaces', () => {
  assert.equal(truncate('abcdef', 4), 'abc…');
  assert.equal(truncate('abc', 4), 'abc');
  const text = renderTable([{ header: 'm', maxWidth: 5 }], [['one\ntwo three']]);
  assert.equal(text.split('\n')[1], 'one …');
});

test('colorEnabled: only on a TTY, never with NO_COLOR or TERM=dumb, FORCE_COLOR forces', () => {
  assert.equal(colorEnabled({ isTTY: true }, {}), true);
  assert.equal(colorEnabled({ isTTY: false }, {}), false);
  assert.equal(colorEnabled({}, {}), false);
  assert.equal(colorEnabled({ isTTY: true }, { NO_COLOR: '1' }), false);
  assert.equal(colorEnabled({ isTTY: true }, { NO_COLOR: '' }), true);
  assert.equal(colorEnabled({ isTTY: true }, { TERM: 'dumb' }), false);
  assert.equal(colorEnabled({ isTTY: false }, { FORCE_COLOR: '1' }), true);
  assert.equal(colorEnabled({ isTTY: true }, { FORCE_COLOR: '1', NO_COLOR: '1' }), false);
});

test('condition colours: normal-true and abnormal-true conditions', () => {
  assert.equal(conditionColor('True'), 'green');
  assert.equal(conditionColor('False'), 'red');
  assert.equal(conditionColor('Unknown'), 'yellow');
  assert.equal(conditionColor('True', false), 'red');
  assert.equal(conditionColor(undefined), undefined);
});

test('ages read like kubectl', () => {
  assert.equal(humanDuration(0), '0s');
  assert.equal(humanDuration(119_000), '119s');
  assert.equal(humanDuration(192_000), '3m12s');
  assert.equal(humanDuration(25 * 60_000), '25m');
  assert.equal(humanDuration((4 * 60 + 10) * 60_000), '4h10m');
  assert.equal(humanDuration(30 * 3_600_000), '30h');
  assert.equal(humanDuration(3 * 86_400_000), '3d');
  assert.equal(humanDuration(800 * 86_400_000), '2y70d');
  const now = new Date('2026-01-01T00:01:00Z');
  assert.equal(formatAge('2026-01-01T00:00:00Z', now), '60s');
  assert.equal(formatAge(undefined, now), '<unknown>');
  assert.equal(formatAge('garbage', now), '<unknown>');
  assert.equal(formatAge('2026-01-01T00:02:00Z', now), '0s', 'clock skew never gives a negative age');
});

test('a tab in a cell becomes a space: its width depends on where it lands, so no count could align the columns', () => {
  // Found by views.property.test.ts: a Microservice's status.reason, a provider ID or an Event's
  // regarding name holding a tab (terminalText keeps tabs) pushed the rest of its row off the columns.
  const text = renderTable(['a', 'b'], [['x\ty', '1'], ['xxxxxxxx', '2']]);
  assert.equal(text, ['A          B', 'x y        1', 'xxxxxxxx   2'].join('\n'));
});
