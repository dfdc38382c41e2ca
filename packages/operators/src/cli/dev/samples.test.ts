import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadSamples, prepareSamples, describeSamples } from './samples.ts';

const samplesDir = fileURLToPath(new URL('../../../../../deploy/samples/', import.meta.url));

test('the samples of deploy/samples: todo-api, a provider and its Secret', async () => {
  const samples = await loadSamples(samplesDir);
  assert.deepEqual(samples.map((s) => `${s.kind}/${s.metadata.name}`).sort(), ['DigitalHumanProvider/studio', 'Microservice/todo-api', 'Secret/digital-human-credentials']);
});

test('prepareSamples points providers at the simulator and puts its token in the named Secret', async () => {
  const samples = await loadSamples(samplesDir);
  const prepared = prepareSamples(samples, 'dev', { endpoint: 'https://127.0.0.1:45678', token: 'sim-token' });
  assert.equal(describeSamples(prepared), 'Secret/digital-human-credentials, Microservice/todo-api, DigitalHumanProvider/studio');
  assert.ok(prepared.every((o) => o.metadata.namespace === 'dev'));
  const provider = prepared.find((o) => o.kind === 'DigitalHumanProvider')!;
  assert.equal((provider.spec as { endpoint: string }).endpoint, 'https://127.0.0.1:45678');
  const secret = prepared.find((o) => o.kind === 'Secret')!;
  assert.deepEqual(secret.stringData, { token: 'sim-token' });
  assert.equal(secret.data, undefined);
  assert.notEqual((samples.find((o) => o.kind === 'Secret')!.stringData as Record<string, string>).token, 'sim-token', 'the input is not modified');
});

test('a token under data is replaced, other keys kept; a missing Secret is an error', () => {
  const provider = { apiVersion: 'dhp.example.com/v1alpha1', kind: 'DigitalHumanProvider', metadata: { name: 'p' }, spec: { endpoint: 'https://x', region: 'r', credentials: { secretRef: { name: 's', key: 'k' } } } };
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'b2xk', other: 'eA==' } };
  const [s] = prepareSamples([provider, secret], 'ns', { endpoint: 'https://sim', token: 't' });
  assert.deepEqual(s!.data, { other: 'eA==' });
  assert.deepEqual(s!.stringData, { k: 't' });
  assert.throws(() => prepareSamples([provider], 'ns', { endpoint: 'https://sim', token: 't' }), /names Secret s, which is not among the samples/);
});
