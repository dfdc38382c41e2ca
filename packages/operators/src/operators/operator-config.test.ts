import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultOperatorConfig, loadOperatorConfig, operatorConfigProblems, parseOperatorConfig, OperatorConfigError } from './operator-config.ts';

function problemsOf(raw: unknown): readonly string[] {
  try {
    parseOperatorConfig(raw, 'cfg.yaml');
  } catch (error) {
    assert.ok(error instanceof OperatorConfigError, String(error));
    return error.problems;
  }
  assert.fail('the configuration was accepted');
}

test('problems in different sections are reported together, with paths from the top of the file', () => {
  const problems = problemsOf({
    micrservice: { replicas: 3 },
    microservice: { resyncPeriodSeconds: 0, defaults: { replicas: -1, resources: { requests: { cpu: 'lots' } } } },
    provider: { vendor: { timeoutSecond: 3 } },
    client: { qps: -1 },
  });
  assert.deepEqual(problems, [
    'client.qps: expected number to be greater or equal to 0',
    'microservice.defaults.replicas: expected integer to be greater or equal to 0',
    'microservice.defaults.resources.requests.cpu: "lots" is not a quantity such as 25m, 0.5 or 128Mi',
    'microservice.resyncPeriodSeconds: expected number to be greater or equal to 1',
    'micrservice: unexpected property (did you mean "microservice"?)',
    'provider.vendor.timeoutSecond: unexpected property (did you mean "timeoutSeconds"?)',
  ]);
});

test('a periodic check shorter than a second is refused: it would run each object\'s reconcile (and vendor reads) about every millisecond', () => {
  assert.deepEqual(problemsOf({ microservice: { resyncPeriodSeconds: 0.000001 }, provider: { healthIntervalSeconds: 0.000001 } }), [
    'microservice.resyncPeriodSeconds: expected number to be greater or equal to 1',
    'provider.healthIntervalSeconds: expected number to be greater or equal to 1',
  ]);
});

test('the message names the file once and lists every problem, one a line', () => {
  assert.throws(
    () => parseOperatorConfig({ micrservice: {}, provider: { healthIntervalSeconds: 'often' } }, 'cfg.yaml'),
    (e: unknown) =>
      e instanceof OperatorConfigError &&
      e.message === 'invalid configuration in cfg.yaml:\n  - micrservice: unexpected property (did you mean "microservice"?)\n  - provider.healthIntervalSeconds: expected number' &&
      !e.message.includes('cfg.yaml.'),
  );
});

test('a section of the wrong type is named by its path; a file that is not a mapping says so', () => {
  assert.deepEqual(problemsOf({ provider: 'fast', microservice: { defaults: [1] } }), ['microservice.defaults: expected object', 'provider: expected object']);
  assert.deepEqual(problemsOf(['a']), ['<top level>: expected object']);
  assert.deepEqual(operatorConfigProblems({ nearNothing: 1 }), ['nearNothing: unexpected property']);
});

test('a valid file, or none, has no problems and keeps the defaults it leaves out', () => {
  assert.deepEqual(operatorConfigProblems(undefined), []);
  assert.deepEqual(parseOperatorConfig(null), defaultOperatorConfig);
  const c = parseOperatorConfig({ microservice: { defaults: { replicas: 3 } }, provider: { vendor: { caFile: '/ca.pem' } } });
  assert.equal(c.microservice.defaults.replicas, 3);
  assert.equal(c.microservice.resyncPeriodMs, defaultOperatorConfig.microservice.resyncPeriodMs);
  assert.deepEqual(c.provider, { vendor: { caFile: '/ca.pem' } });
});

test('microservice.maxRetryDelaySeconds caps the backoff of a failing Microservice: 60 s by default, 0.01 s to an hour', () => {
  assert.equal(defaultOperatorConfig.microservice.maxRetryDelayMs, 60_000);
  assert.equal(parseOperatorConfig({ microservice: { maxRetryDelaySeconds: 120 } }).microservice.maxRetryDelayMs, 120_000);
  assert.deepEqual(problemsOf({ microservice: { maxRetryDelaySeconds: 0 } }), ['microservice.maxRetryDelaySeconds: expected number to be greater or equal to 0.01']);
  assert.deepEqual(problemsOf({ microservice: { maxRetryDelaySeconds: 3_601 } }), ['microservice.maxRetryDelaySeconds: expected number to be less or equal to 3600']);
});

test('loadOperatorConfig names the file in every error', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'converge-config-'));
  try {
    const file = join(dir, 'cfg.yaml');
    await writeFile(file, 'micrservice: {}\nprovider:\n  vendor: { burst: 0 }\n');
    await assert.rejects(loadOperatorConfig(file), (e: unknown) => e instanceof OperatorConfigError && e.message.startsWith(`invalid configuration in ${file}:\n`) && e.problems.length === 2);
    await writeFile(file, 'a: [');
    await assert.rejects(loadOperatorConfig(file), (e: unknown) => e instanceof OperatorConfigError && /^not YAML or JSON: /.test(e.problems[0]!));
    await assert.rejects(loadOperatorConfig(join(dir, 'missing.yaml')), /cannot read the file/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// A tag or directive the file's YAML does not define (`!str`, `%FOO`) was a Node warning on the
// operator's stderr, outside its log, and the value was read as plain text: `otlpEndpoint: !url
// http://…` loaded as if the tag were not there. The file is the platform team's: what it holds
// that the operator cannot read as written is a problem of the file, like a misspelt key.
test('a YAML tag or directive the operator does not know is a problem of the file, not a process warning', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'converge-config-'));
  const warnings: string[] = [];
  const onWarning = (w: Error) => void warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    const file = join(dir, 'cfg.yaml');
    await writeFile(file, 'microservice:\n  defaults:\n    otlpEndpoint: !url http://collector:4318\n');
    await assert.rejects(loadOperatorConfig(file), (e: unknown) => e instanceof OperatorConfigError && e.problems.length === 1 && /^line 3, column 19: unresolved tag !url/.test(e.problems[0]!));
    await writeFile(file, '%FOO bar\n---\nmicroservice: {}\n');
    await assert.rejects(loadOperatorConfig(file), (e: unknown) => e instanceof OperatorConfigError && /^line 1, column 1: unknown directive %FOO/.test(e.problems[0]!));
    // What YAML 1.2 defines stays fine: the core tags, the %YAML directive.
    await writeFile(file, '%YAML 1.2\n---\nmicroservice:\n  defaults:\n    otlpEndpoint: !!str http://collector:4318\n');
    assert.equal((await loadOperatorConfig(file)).microservice.defaults.otlpEndpoint, 'http://collector:4318');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  } finally {
    process.off('warning', onWarning);
    await rm(dir, { recursive: true, force: true });
  }
});

test('a provider.vendor.caFile that cannot be read, or holds no certificate, is a problem of the file, found before anything starts', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'converge-config-'));
  try {
    const file = join(dir, 'cfg.yaml');
    const problemsOf = async (caFile: string) => {
      await writeFile(file, `provider:\n  vendor: { caFile: ${JSON.stringify(caFile)} }\n`);
      const err = await loadOperatorConfig(file).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof OperatorConfigError, `an OperatorConfigError for ${caFile}, not ${String(err)}`);
      return err.problems;
    };
    assert.match((await problemsOf(join(dir, 'missing.pem')))[0]!, /^provider\.vendor\.caFile: cannot read .*missing\.pem \(ENOENT\)/);
    assert.match((await problemsOf(dir))[0]!, /^provider\.vendor\.caFile: cannot read .* \(EISDIR\)/);
    await writeFile(join(dir, 'garbage.pem'), 'not a certificate');
    assert.match((await problemsOf(join(dir, 'garbage.pem')))[0]!, /^provider\.vendor\.caFile: .*garbage\.pem holds no PEM certificate/);
    await writeFile(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    await writeFile(file, `provider:\n  vendor: { caFile: ${JSON.stringify(join(dir, 'ca.pem'))} }\n`);
    await loadOperatorConfig(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
