/**
 * Unit tests of the compare benchmark's pure parts: the run plan, namespaces, /proc parsing,
 * request tallies, the quiet-machine wait, the build hash, and the compare flags of `npm run bench`.
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditEvent } from '@converge/envtest';
import { parseBenchArgs, BenchUsageError, SCENARIO_NAMES } from '../support/options.ts';
import { contentHash, isGoBuildInput } from './build.ts';
import { CONTENDER_NAMES, SETTING_NAMES, USER_AGENTS, comparisonPlan, cpuBetween, parseMachineCpu, parseProcStat, parseProcStatus, requestTimesFromSamples, requestTimesFromTotals, runNamespace, tallyRequests, waitForQuietMachine } from './contenders.ts';

const all = { settings: SETTING_NAMES, contenders: CONTENDER_NAMES, workers: 4, qps: 50, burst: 100, cpus: 2 };

describe('comparisonPlan', () => {
  it('runs every contender under every setting, the shared-bucket variant only with a limit', () => {
    const plan = comparisonPlan(all);
    assert.deepEqual(
      plan.map((r) => `${r.setting}/${r.contender}`),
      [
        'defaults/converge', 'defaults/controller-runtime', 'defaults/kopf', 'defaults/minimal-client',
        'limited/converge', 'limited/controller-runtime', 'limited/controller-runtime-shared', 'limited/kopf', 'limited/minimal-client',
        'unlimited/converge', 'unlimited/controller-runtime', 'unlimited/kopf', 'unlimited/minimal-client',
      ],
    );
  });

  it('leaves the frameworks their own defaults, and sets workers and limits otherwise', () => {
    const plan = comparisonPlan(all);
    const get = (s: string, c: string) => plan.find((r) => r.setting === s && r.contender === c)!;
    for (const c of ['converge', 'controller-runtime', 'kopf'] as const) {
      assert.equal(get('defaults', c).workers, undefined);
      assert.equal(get('defaults', c).qps, undefined);
    }
    assert.match(get('defaults', 'kopf').describe, /^6 handler threads/);
    assert.deepEqual([get('limited', 'controller-runtime').qps, get('limited', 'controller-runtime').burst, get('limited', 'controller-runtime').workers], [50, 100, 4]);
    assert.equal(get('limited', 'controller-runtime-shared').sharedLimiter, true);
    assert.equal(get('limited', 'kopf').qps, undefined, 'Kopf has no client-side limiter to set');
    for (const c of ['converge', 'controller-runtime', 'minimal-client'] as const) assert.equal(get('unlimited', c).qps, 0);
    assert.equal(get('defaults', 'minimal-client').qps, 0);
  });

  it('falls back to 50/s burst 100 for the limited row when --qps 0 was given', () => {
    const r = comparisonPlan({ ...all, qps: 0, settings: ['limited'], contenders: ['converge'] });
    assert.deepEqual([r[0]!.qps, r[0]!.burst], [50, 100]);
  });

  it('keeps the canonical order whatever subset is asked for', () => {
    const plan = comparisonPlan({ ...all, settings: ['unlimited', 'defaults'], contenders: ['kopf', 'converge'] });
    assert.deepEqual(plan.map((r) => `${r.setting}/${r.contender}`), ['defaults/converge', 'defaults/kopf', 'unlimited/converge', 'unlimited/kopf']);
  });
});

describe('comparisonPlan with rounds', () => {
  it('repeats each setting, every second round in reverse order', () => {
    const plan = comparisonPlan({ ...all, settings: ['defaults', 'unlimited'], contenders: ['converge', 'minimal-client'], rounds: 3 });
    assert.deepEqual(plan.map((r) => `${r.setting}/${r.contender}/${r.round}`), [
      'defaults/converge/1', 'defaults/minimal-client/1', 'defaults/minimal-client/2', 'defaults/converge/2', 'defaults/converge/3', 'defaults/minimal-client/3',
      'unlimited/converge/1', 'unlimited/minimal-client/1', 'unlimited/minimal-client/2', 'unlimited/converge/2', 'unlimited/converge/3', 'unlimited/minimal-client/3',
    ]);
    const names = plan.map(runNamespace);
    assert.equal(new Set(names).size, names.length, 'a namespace per run');
  });
});

describe('runNamespace', () => {
  it('is a distinct DNS label per run', () => {
    const names = comparisonPlan(all).map(runNamespace);
    assert.equal(new Set(names).size, names.length);
    for (const n of names) assert.match(n, /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
  });

  it('gives the warm-up run (round 0) a namespace of its own', () => {
    const warmUp = runNamespace({ setting: 'unlimited', contender: 'minimal-client', round: 0 });
    assert.equal(warmUp, 'bench-cmp-unlimited-minimal-warmup');
    assert.ok(!comparisonPlan({ ...all, rounds: 3 }).map(runNamespace).includes(warmUp));
  });
});

describe('/proc parsing', () => {
  it('reads the machine busy and total CPU from /proc/stat', () => {
    const text = 'cpu  100 5 50 800 20 3 2 7 0 0\ncpu0 50 2 25 400 10 1 1 4 0 0\n';
    assert.deepEqual(parseMachineCpu(text), { busyMs: 1670, totalMs: 9870, stealMs: 70 });
  });

  it('turns two snapshots into CPU per process and busy CPUs', () => {
    const a = { processes: { apiserver: 1000, etcd: 500 }, machine: { busyMs: 10_000, totalMs: 40_000, stealMs: 100 } };
    const b = { processes: { apiserver: 4000, etcd: 900, late: 5 }, machine: { busyMs: 25_000, totalMs: 60_000, stealMs: 1_100 } };
    assert.deepEqual(cpuBetween(a, b, 2), { processes: { apiserver: 3000, etcd: 400 }, machineBusyCpus: 1.5, machineStealCpus: 0.1 });
  });

  it('reads VmRSS and VmHWM from /proc/<pid>/status', () => {
    const text = 'Name:\tbench-cr\nVmPeak:\t 1300000 kB\nVmHWM:\t   61234 kB\nVmRSS:\t   55000 kB\nThreads:\t9\n';
    assert.deepEqual(parseProcStatus(text), { rssBytes: 55000 * 1024, peakRssBytes: 61234 * 1024 });
    assert.throws(() => parseProcStatus('Name:\tx\n'), /VmRSS/);
  });

  it('reads utime + stime from /proc/<pid>/stat, whatever the command name holds', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
    const stat = '4242 (kopf (py) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 123 456 789';
    assert.equal(parseProcStat(stat), 3000);
    assert.equal(parseProcStat(stat, 1000), 300);
  });
});

describe('tallyRequests', () => {
  const ev = (verb: string, stage: AuditEvent['stage'], resource: string, at: string, subresource?: string): AuditEvent => ({
    auditID: Math.random().toString(36),
    stage,
    verb,
    requestURI: `/apis/x/${resource}`,
    user: { username: 'admin' },
    objectRef: { resource, ...(subresource ? { subresource } : {}) },
    requestReceivedTimestamp: at,
    stageTimestamp: at,
  });

  it('counts each request once, by verb and resource, up to a time', () => {
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const counts = tallyRequests(
      [
        ev('watch', 'ResponseStarted', 'deployments', t(0)),
        ev('watch', 'ResponseComplete', 'deployments', t(0)),
        ev('create', 'ResponseComplete', 'deployments', t(1)),
        ev('patch', 'ResponseComplete', 'microservices', t(2), 'status'),
        { ...ev('patch', 'ResponseComplete', 'microservices', t(3), 'status'), responseStatus: { code: 409 } },
        ev('get', 'ResponseComplete', 'services', t(4)),
        ev('patch', 'ResponseComplete', 'microservices', t(9), 'status'),
      ],
      Date.UTC(2026, 0, 1, 0, 0, 5),
    );
    assert.deepEqual(counts, {
      total: 5,
      writes: 3,
      reads: 1,
      watches: 1,
      conflicts: 1,
      byVerb: { 'watch deployments': 1, 'create deployments': 1, 'patch microservices/status': 2, 'get services': 1 },
    });
  });

  it("tells Kopf's two clients from everyone else", () => {
    const kopf = USER_AGENTS.kopf as RegExp;
    assert.ok(kopf.test('kopf/1.45.2'));
    assert.ok(kopf.test('bench-kopf/0.1 (kubernetes-python)'));
    assert.ok(!kopf.test('converge-bench/0.1'));
  });
});

describe('build inputs', () => {
  it('hashes Go sources, go.mod and go.sum, not tests', () => {
    assert.deepEqual(['main.go', 'main_test.go', 'go.mod', 'go.sum', 'README.md'].filter(isGoBuildInput), ['main.go', 'go.mod', 'go.sum']);
  });

  it('gives the same hash whatever the order of the files, and another for any change', () => {
    const a = { name: 'a.go', content: 'package main' };
    const b = { name: 'go.mod', content: 'module x' };
    assert.equal(contentHash([a, b], ['linux']), contentHash([b, a], ['linux']));
    assert.match(contentHash([a, b]), /^[0-9a-f]{16}$/);
    assert.notEqual(contentHash([a, b], ['linux']), contentHash([a, { ...b, content: 'module y' }], ['linux']));
    assert.notEqual(contentHash([a, b], ['linux']), contentHash([a, b], ['darwin']));
  });
});

describe('compare flags', () => {
  it('compare runs only when asked for, after the default scenarios', () => {
    assert.ok(!parseBenchArgs([])!.scenarios.includes('compare'));
    assert.deepEqual(parseBenchArgs([])!.scenarios, [...SCENARIO_NAMES]);
    assert.deepEqual(parseBenchArgs(['--scenarios', 'compare,cold-start'])!.scenarios, ['cold-start', 'compare']);
  });

  it('selects settings rows and contenders, in canonical order, and rejects unknown names', () => {
    const o = parseBenchArgs(['--scenarios', 'compare', '--compare-settings', 'unlimited,defaults', '--compare-contenders', 'kopf,converge'])!;
    assert.deepEqual(o.compareSettings, ['defaults', 'unlimited']);
    assert.deepEqual(o.compareContenders, ['converge', 'kopf']);
    assert.deepEqual(parseBenchArgs(['--scenarios', 'compare'])!.compareContenders, [...CONTENDER_NAMES]);
    assert.throws(() => parseBenchArgs(['--compare-contenders', 'operator-sdk']), BenchUsageError);
    assert.throws(() => parseBenchArgs(['--compare-settings', ',']), BenchUsageError);
    assert.equal(parseBenchArgs(['--compare-settings', 'defaults'])!.isDefaultRun, false);
  });
});

describe('waitForQuietMachine', () => {
  /** /proc/stat texts whose successive windows keep `busy` of every 100 ticks busy (of all CPUs). */
  const stats = (busy: number[]) => {
    let user = 0;
    let idle = 0;
    const texts = [`cpu  0 0 0 0 0 0 0 0 0 0`];
    for (const b of busy) {
      user += b;
      idle += 100 - b;
      texts.push(`cpu  ${user} 0 0 ${idle} 0 0 0 0 0 0`);
    }
    let i = 0;
    return async () => texts[Math.min(i++, texts.length - 1)]!;
  };

  it('waits for enough quiet windows in a row; a busy one starts the count again', async () => {
    // With 2 CPUs, busy share × 2 CPUs: 80 % → 1.6 busy, 10 % → 0.2.
    const r = await waitForQuietMachine({ busyBelowCpus: 0.5, windowMs: 1, quietWindows: 2, maxMs: 10_000, cpuCount: 2 }, stats([80, 10, 80, 10, 10, 80]));
    assert.equal(r.quiet, true);
    assert.ok(r.lastBusyCpus < 0.5);
  });

  it('gives up after maxMs on a machine that stays busy, and says so', async () => {
    const r = await waitForQuietMachine({ busyBelowCpus: 0.5, windowMs: 5, quietWindows: 2, maxMs: 30, cpuCount: 2 }, stats(Array(100).fill(90)));
    assert.equal(r.quiet, false);
    assert.ok(r.lastBusyCpus > 0.5);
  });
});

describe('request times', () => {
  it('turns the rest_client histogram sums and counts into a mean per verb and resource, other metrics ignored', () => {
    const samples = [
      { name: 'rest_client_request_duration_seconds_sum', labels: { verb: 'create', resource: 'services' }, value: 10 },
      { name: 'rest_client_request_duration_seconds_count', labels: { verb: 'create', resource: 'services' }, value: 100 },
      { name: 'rest_client_request_duration_seconds_sum', labels: { verb: 'list', resource: 'deployments' }, value: 0.04 },
      { name: 'rest_client_request_duration_seconds_count', labels: { verb: 'list', resource: 'deployments' }, value: 1 },
      { name: 'rest_client_request_duration_seconds_count', labels: { verb: 'get', resource: 'pods' }, value: 0 },
      { name: 'rest_client_requests_total', labels: { verb: 'create', resource: 'services' }, value: 100 },
    ];
    assert.deepEqual(requestTimesFromSamples(samples), { 'create services': { count: 100, meanMs: 100 }, 'list deployments': { count: 1, meanMs: 40 } });
  });

  it("reads the plain client's totals, and nothing when it reported none", () => {
    assert.deepEqual(requestTimesFromTotals({ 'create services': { count: 4, sumMs: 320 }, 'get x': { count: 0, sumMs: 0 } }), { 'create services': { count: 4, meanMs: 80 } });
    assert.equal(requestTimesFromTotals(undefined), undefined);
  });
});
