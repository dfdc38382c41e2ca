/**
 * The image starts the operator with the Node.js flags the benchmarks measured
 * (packages/operators/src/operators/node-flags.ts, ADR 0034).
 * @module
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { OPERATOR_NODE_FLAGS } from '../../packages/operators/src/operators/node-flags.ts';

test("the Dockerfile's ENTRYPOINT passes exactly OPERATOR_NODE_FLAGS to node", () => {
  const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
  const line = dockerfile.split('\n').find((l) => l.startsWith('ENTRYPOINT '));
  assert.ok(line, 'the Dockerfile has an ENTRYPOINT');
  const argv = JSON.parse(line.slice('ENTRYPOINT '.length)) as string[];
  assert.equal(argv[0], 'node');
  assert.deepEqual(argv.slice(1, -1), [...OPERATOR_NODE_FLAGS]);
  assert.match(argv.at(-1)!, /bin\/converge\.js$/);
});

test('turning the optimizing compiler on after start takes effect on the shipped Node (compiler-on-backlog.ts)', () => {
  // %GetOptimizationStatus bit 16 (kTurboFanned): the function runs TurboFan code.
  const script = `
    const { setFlagsFromString } = require('node:v8');
    function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
    const run = () => { for (let i = 0; i < 20000; i++) hot(100); return (%GetOptimizationStatus(hot) & 16) !== 0; };
    const before = run();
    setFlagsFromString('--turbofan');
    const after = run();
    console.log(JSON.stringify({ before, after }));`;
  const out = execFileSync(process.execPath, [...OPERATOR_NODE_FLAGS, '--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), { before: false, after: true });
});
