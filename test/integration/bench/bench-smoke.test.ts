/**
 * The benchmark harness cannot rot: `node bench/main.ts --size tiny` runs every scenario end to
 * end on a control plane of its own (not the suite's shared one: the benchmark starts and stops
 * its own) and writes the report files. Nothing here asserts on a time; benchmarks measure,
 * tests check that the measuring works.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../../bench/main.ts', import.meta.url));
const SCENARIOS = ['cold-start', 'idle-cost', 'repair', 'churn', 'memory', 'providers', 'provider-signals', 'dashboard', 'cli-start'];

test('npm run bench -- --size tiny writes a report with every scenario', { timeout: 900_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'converge-bench-smoke-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const child = spawn(process.execPath, [MAIN, '--size', 'tiny', '--no-latest', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | string>((resolve) => child.on('close', (c, s) => resolve(c ?? s ?? -1)));
  assert.equal(code, 0, `bench exited with ${code}; last output:\n${output.split('\n').slice(-40).join('\n')}`);

  for (const f of ['report.json', 'report.md', 'chart.svg']) assert.ok(existsSync(join(out, f)), `${f} written`);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
    machine: { cpus: number; node: string; kubernetes: string; git: { commit: string } };
    scenarios: { name: string; status: string; error?: string; figures?: Record<string, unknown>; tables?: unknown[] }[];
  };
  assert.deepEqual(report.scenarios.map((s) => s.name), SCENARIOS);
  for (const s of report.scenarios) {
    assert.equal(s.status, 'ok', `${s.name}: ${s.error ?? ''}`);
    assert.ok(s.figures && Object.keys(s.figures).length > 0, `${s.name} has figures`);
    assert.ok(s.tables && s.tables.length > 0, `${s.name} has tables`);
  }
  assert.ok(report.machine.cpus > 0 && report.machine.node.startsWith('v') && report.machine.kubernetes.startsWith('v'), 'machine recorded');
  assert.match(report.machine.git.commit, /^[0-9a-f]{40}$|^unknown$/);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  for (const title of ['Cold start', 'Idle cost', 'Repair', 'Churn', 'Memory', 'Providers', 'Dashboard']) assert.ok(md.includes(`## ${title}`), `report.md has ${title}`);
  assert.match(readFileSync(join(out, 'chart.svg'), 'utf8'), /^<svg /);
});
