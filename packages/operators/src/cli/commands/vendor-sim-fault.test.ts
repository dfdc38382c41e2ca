import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { startVendorSimulator } from '../../vendor-sim/index.ts';
import { writeVendorSimHandle } from '../dev/vendor-sim-handle.ts';
import type { CommandIO } from '../shared/kubectl.ts';
import { parseDuration, planFaults, run } from './vendor-sim-fault.ts';

function capture(): CommandIO & { out: string; err: string } {
  const io = { out: '', err: '', env: process.env, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

/** A simulator as `converge dev` runs it, with its handle file. */
async function devSimulator(t: { after(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'converge-fault-test-'));
  const sim = await startVendorSimulator({ token: 'v1-token' });
  const handle = join(dir, 'vendor-sim.json');
  await writeVendorSimHandle(handle, { baseUrl: sim.baseUrl, caPath: sim.caPath, adminToken: sim.adminToken, pid: process.pid });
  t.after(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { sim, handle, dir };
}

test('durations and fault plans', () => {
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('2m'), 120_000);
  assert.equal(parseDuration('1.5'), 1500);
  for (const bad of ['', '0', 'soon', '-1s', '1d']) assert.equal(parseDuration(bad), undefined, bad);
  assert.deepEqual(planFaults({ outage: '30s' }), { patch: { outage: {} }, forMs: 30_000, clear: false });
  assert.deepEqual(planFaults({ outage: 'on', errors: '0.5' }), { patch: { outage: {}, errors: { rate: 0.5 } }, clear: false });
  assert.deepEqual(planFaults({ health: 'degraded:GPU hot: 91°C', instance: 'inst-1' }), { patch: {}, health: { status: 'degraded', message: 'GPU hot: 91°C', instance: 'inst-1' }, clear: false });
  for (const [values, message] of [
    [{ outage: 'later' }, /--outage takes a duration/],
    [{ errors: '2' }, /--errors takes a share between 0 and 1/],
    [{ health: 'sick' }, /--health takes healthy, degraded or down/],
    [{ instance: 'x' }, /--instance only applies with --health/],
    [{ for: '10s' }, /--for needs a fault/],
    [{ clear: true, hang: true }, /--clear cannot be combined/],
  ] as const) assert.match(planFaults(values) as string, message);
});

test('--outage <duration> holds the outage that long, then removes exactly it', async (t) => {
  const { sim, handle } = await devSimulator(t);
  sim.setFaults({ latency: { ms: 1 } });
  const io = capture();
  const running = run(['--outage', '1s', '--sim', handle], io);
  for (let i = 0; !sim.faults().outage && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sim.faults(), { latency: { ms: 1 }, outage: {} }, 'the outage is on, the other fault stays');
  assert.equal(await running, 0, io.err);
  assert.deepEqual(sim.faults(), { latency: { ms: 1 } }, 'the outage is off again, the other fault still on');
  assert.match(io.out, /^vendor faults on: outage for 1 s \(Ctrl-C ends them early\)\nvendor faults off: outage\n$/);
});

test('Ctrl-C during --for removes the faults at once', async (t) => {
  const { sim, handle } = await devSimulator(t);
  const stop = new AbortController();
  const io = capture();
  const running = run(['--errors', '0.5', '--hang', '--for', '10m', '--sim', handle], io, stop.signal);
  for (let i = 0; !sim.faults().hang && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sim.faults(), { errors: { rate: 0.5 }, hang: {} });
  stop.abort();
  assert.equal(await running, 0, io.err);
  assert.deepEqual(sim.faults(), {});
});

test('faults without a duration stay until --clear; --show tells what is active; --health sets the vendor words', async (t) => {
  const { sim, handle } = await devSimulator(t);
  const io = capture();
  assert.equal(await run(['--latency', '300ms', '--rate-limit', '5', '--sim', handle], io), 0, io.err);
  assert.deepEqual(sim.faults(), { latency: { ms: 300 }, rateLimit: { requestsPerSecond: 5 } });

  const empty = capture();
  assert.equal(await run(['--health', 'degraded', '--sim', handle], empty), 0, empty.err);
  assert.match(empty.out, /no instances yet/);

  const show = capture();
  assert.equal(await run(['--sim', handle], show), 0, show.err);
  assert.match(show.out, new RegExp(`^vendor simulator ${sim.baseUrl.replace(/[.]/g, '\\.')}\nfaults: latency \\{"ms":300\\}, rateLimit \\{"requestsPerSecond":5\\}\ninstances: none\nrequests: \\d+`));

  const clear = capture();
  assert.equal(await run(['--clear', '--sim', handle], clear), 0, clear.err);
  assert.deepEqual(sim.faults(), {});
  assert.equal(clear.out, 'vendor faults cleared\n');
});

test('--health reaches every instance (or one), with the vendor\'s words', async (t) => {
  const { sim, handle } = await devSimulator(t);
  const dispatcher = new Agent({ connect: { ca: [...rootCertificates, sim.caPem] } });
  t.after(() => dispatcher.close());
  for (const key of ['a', 'b']) {
    const res = await request(`${sim.baseUrl}/v1/instances`, {
      method: 'POST',
      dispatcher,
      headers: { authorization: 'Bearer v1-token', 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ region: 'eu-west', displayName: key }),
    });
    assert.equal(res.statusCode, 201, await res.body.text());
    await res.body.dump();
  }
  const [first, second] = sim.instances();
  const io = capture();
  assert.equal(await run(['--health', 'degraded:GPU hot', '--sim', handle], io), 0, io.err);
  assert.deepEqual(sim.instances().map((i) => [i.health, i.healthMessage]), [['degraded', 'GPU hot'], ['degraded', 'GPU hot']]);
  assert.match(io.out, new RegExp(`instance ${first!.id}: health degraded \\(GPU hot\\)\ninstance ${second!.id}: health degraded`));

  const one = capture();
  assert.equal(await run(['--health', 'healthy', '--instance', second!.id, '--sim', handle], one), 0, one.err);
  assert.deepEqual(sim.instances().map((i) => i.health), ['degraded', 'healthy']);
  const unknown = capture();
  assert.equal(await run(['--health', 'down', '--instance', 'inst-nope', '--sim', handle], unknown), 1);
  assert.match(unknown.err, /no instance inst-nope/);
});

test('no running simulator: a message that says what to do, exit 1; usage errors exit 2', async (t) => {
  const { sim, handle, dir } = await devSimulator(t);
  const missing = capture();
  assert.equal(await run(['--sim', join(dir, 'nope.json')], missing), 1);
  assert.match(missing.err, /no running vendor simulator found: .*nope\.json does not exist\. Start one with `npm start`/);

  // A session that was killed: the handle stays, the simulator (and its CA folder) are gone.
  const { sim: other } = await devSimulator(t);
  await writeVendorSimHandle(handle, { baseUrl: sim.baseUrl, caPath: other.caPath, adminToken: sim.adminToken, pid: process.pid });
  await sim.stop();
  const refused = capture();
  assert.equal(await run(['--outage', 'on', '--sim', handle], refused), 1);
  assert.match(refused.err, /the vendor simulator named in .*vendor-sim\.json is not running \(https:\/\/127\.0\.0\.1:\d+ does not answer\): is `npm start` still running\?/);
  await other.stop();
  const noCa = capture();
  assert.equal(await run(['--sim', handle], noCa), 1);
  assert.match(noCa.err, /is not running \(its CA file .* is gone\)/);

  const usage = capture();
  assert.equal(await run(['--errors', 'lots'], usage), 2);
  assert.match(usage.err, /^converge vendor-sim fault: --errors takes a share/);
});
