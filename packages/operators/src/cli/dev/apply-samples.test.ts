import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadSamples } from './samples.ts';
import { sampleKeys, samplesReady } from './apply-samples.ts';
import type { StatusDocument } from '../views/index.ts';

const samplesDir = fileURLToPath(new URL('../../../../../deploy/samples/', import.meta.url));

function doc(converged: { microservices: string[]; providers: string[] }): StatusDocument {
  const row = (name: string) => ({ namespace: 'dev', name, converged: true });
  return {
    microservices: converged.microservices.map(row),
    providers: converged.providers.map(row),
  } as unknown as StatusDocument;
}

test('the samples are Ready once each Microservice and provider is converged; the Secret is not waited for', async () => {
  const keys = sampleKeys(await loadSamples(samplesDir), 'dev');
  assert.deepEqual(keys.sort(), ['DigitalHumanProvider dev/studio', 'Microservice dev/todo-api']);
  assert.equal(samplesReady(doc({ microservices: [], providers: [] }), keys), false);
  assert.equal(samplesReady(doc({ microservices: ['todo-api'], providers: [] }), keys), false);
  assert.equal(samplesReady(doc({ microservices: ['todo-api'], providers: ['studio'] }), keys), true);
  // A same-named object of the other kind does not count.
  assert.equal(samplesReady(doc({ microservices: ['todo-api', 'studio'], providers: [] }), keys), false);
});
