/**
 * The image starts the operator with the Node.js flags the benchmarks measured
 * (packages/operators/src/operators/node-flags.ts, ADR 0034).
 * @module
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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
