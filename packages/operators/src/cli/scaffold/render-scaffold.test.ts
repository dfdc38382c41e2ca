import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkScaffoldInput, pluralOf, renderScaffold } from './render-scaffold.ts';
import { assetDir } from '../shared/package-assets.ts';

const templates = `${assetDir('templates')}init`;
const input = { name: 'gadget-operator', group: 'toys.example.com', version: 'v1alpha1', kind: 'Gadget', runtimeVersion: '0.1.0' };

test('renders every template with the names filled in, and nothing left unfilled', () => {
  const files = renderScaffold(input, templates);
  assert.deepEqual([...files.keys()], [
    '.gitignore', 'README.md', 'package.json', 'samples/gadget.json', 'src/api/gadget.ts', 'src/crds.ts',
    'src/dev.ts', 'src/main.ts', 'src/operator.ts', 'src/reconciler.ts', 'test/operator.test.ts', 'tsconfig.json',
  ]);
  for (const [path, text] of files) assert.doesNotMatch(text, /\{\{\w+\}\}/, path);
  const pkg = JSON.parse(files.get('package.json')!) as { name: string; dependencies: Record<string, string> };
  assert.equal(pkg.name, 'gadget-operator');
  assert.equal(pkg.dependencies['@converge/runtime'], '^0.1.0');
  assert.match(files.get('src/api/gadget.ts')!, /plural: 'gadgets'/);
  assert.deepEqual(renderScaffold(input, templates), files, 'deterministic');
});

test('bad names are all reported, each with its flag', () => {
  assert.deepEqual(checkScaffoldInput(input), []);
  const problems = checkScaffoldInput({ ...input, name: 'My Op', group: 'nodot', version: '1', kind: 'gadget' });
  assert.equal(problems.length, 4);
  for (const flag of ['--name', '--group', '--version', '--kind']) assert.ok(problems.some((p) => p.startsWith(flag)), flag);
  assert.throws(() => renderScaffold({ ...input, kind: 'x' }, templates), /--kind/);
});

test('plurals as Kubebuilder guesses them', () => {
  assert.deepEqual(['gadget', 'box', 'policy', 'key', 'match'].map(pluralOf), ['gadgets', 'boxes', 'policies', 'keys', 'matches']);
});
