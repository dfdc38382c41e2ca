/**
 * What a Microservice-only operator process loads (issue 17, goal 3: idle RSS ≤ 70 MB). In a
 * child process, a module hook records every module resolved while `converge run`'s modules are
 * imported, the deploy's configuration is loaded and checked, and a valid spec and its desired
 * state are checked and rendered; then the list must hold neither TypeBox (≈ 250 modules,
 * ≈ 3 MiB of RSS: the schemas, the CRDs and TypeBox's own checker are for the CLI, the tests and
 * explaining a failure) nor the provider operator; the provider operator's own modules load no
 * TypeBox either. An invalid spec or configuration may load
 * TypeBox, to say what is wrong: the second case shows it does, and says the same as before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

const HOOK = `
import { registerHooks } from 'node:module';
globalThis.__loaded = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); globalThis.__loaded.add(r.url); return r; } });
`;

function loadedBy(script: string): { loaded: string[]; out: unknown } {
  const stdout = execFileSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(HOOK)}`, '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { loaded: string[]; out: unknown };
}

const RUN_PATH = `
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
const run = await import('./packages/operators/src/cli/commands/run.ts');
const { parseOperatorConfig } = await import('./packages/operators/src/operators/operator-config.ts');
const { checkMicroserviceSpec } = await import('./packages/operators/src/operators/microservice/api/schema-free.ts');
const { renderDesiredState } = await import('./packages/operators/src/operators/microservice/desired-state.ts');
const config = parseOperatorConfig(parse(readFileSync('deploy/base/operator-config.yaml', 'utf8')));
const spec = { container: { image: 'ghcr.io/org/app:1.0.0', port: 8080, env: [{ name: 'A', value: 'b' }] }, replicas: 2 };
const problems = checkMicroserviceSpec(spec);
const rendered = renderDesiredState({ apiVersion: 'platform.example.io/v1', kind: 'Microservice', metadata: { name: 'web', namespace: 'ns', uid: 'u1', generation: 1 }, spec }, config.microservice.defaults);
console.log(JSON.stringify({ loaded: [...globalThis.__loaded], out: { run: typeof run.run, problems, deployment: rendered.deployment.metadata.name } }));
`;

test('a Microservice-only operator process loads neither TypeBox nor the provider operator', () => {
  const { loaded, out } = loadedBy(RUN_PATH);
  assert.deepEqual(out, { run: 'function', problems: [], deployment: 'web' });
  const typebox = loaded.filter((u) => u.includes('/@sinclair/typebox/'));
  assert.deepEqual(typebox.slice(0, 3), [], `TypeBox is loaded (${typebox.length} modules); a module on the operator's path imports a schema`);
  const ours = loaded.filter((u) => u.startsWith('file://') && u.includes('/packages/'));
  const schemaModules = ours.filter((u) => u.includes('/packages/operators/') && /\/api\/(v1|v1alpha1|status|microservice|digital-human-provider|index)\.ts$|-schema\.ts$/.test(u));
  assert.deepEqual(schemaModules, [], 'schema modules on the operator path');
  // The provider's config check (with its check of allowedEndpoints) and, for the conversion
  // webhook, its converter and names are pure API.
  const allowed = ['/provider/provider-config.ts', '/provider/allowed-endpoints.ts', '/provider/api/constants.ts', '/provider/api/conversion.ts'];
  const provider = ours.filter((u) => u.includes('/operators/provider/') && !allowed.some((a) => u.endsWith(a)));
  assert.deepEqual(provider, [], 'provider operator modules in a Microservice-only process');
  assert.ok(ours.length > 20, `the hook saw the operator's modules (${ours.length})`);
});

test('the provider operator\'s modules load no TypeBox either', () => {
  const { loaded, out } = loadedBy(`
const { registerProviderOperator } = await import('./packages/operators/src/operators/provider/register.ts');
const { parseProviderConfig } = await import('./packages/operators/src/operators/provider/provider-config.ts');
const config = parseProviderConfig({ healthIntervalSeconds: 10, vendor: { requestsPerSecond: 5 } });
console.log(JSON.stringify({ loaded: [...globalThis.__loaded], out: { register: typeof registerProviderOperator, rps: config.vendor.requestsPerSecond } }));
`);
  assert.deepEqual(out, { register: 'function', rps: 5 });
  const typebox = loaded.filter((u) => u.includes('/@sinclair/typebox/'));
  assert.deepEqual(typebox.slice(0, 3), [], `TypeBox is loaded (${typebox.length} modules)`);
  assert.ok(loaded.some((u) => u.endsWith('/provider/reconciler.ts')), 'the provider operator was loaded');
});

test('an invalid spec or configuration is still explained in TypeBox\'s words', () => {
  const { loaded, out } = loadedBy(`
const { checkMicroserviceSpec } = await import('./packages/operators/src/operators/microservice/api/schema-free.ts');
const { operatorConfigProblems } = await import('./packages/operators/src/operators/operator-config.ts');
const spec = checkMicroserviceSpec({ container: { image: 'nginx', port: 0 } });
const config = operatorConfigProblems({ micrservice: {}, client: { qps: -1 }, microservice: { defaults: { replicas: 'two' } } });
console.log(JSON.stringify({ loaded: [...globalThis.__loaded], out: { spec, config } }));
`);
  assert.deepEqual(out, {
    spec: ['spec.container.port: Expected integer to be greater or equal to 1'],
    config: [
      'client.qps: expected number to be greater or equal to 0',
      'microservice.defaults.replicas: expected integer',
      'micrservice: unexpected property (did you mean "microservice"?)',
    ],
  });
  assert.ok(loaded.some((u) => u.includes('/@sinclair/typebox/')), 'TypeBox explains the failure');
});
