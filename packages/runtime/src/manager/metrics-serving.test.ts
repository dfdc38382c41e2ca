/**
 * The manager's metrics server over HTTPS (`metricsSecureServing`, `metricsCertDir`), without an
 * API server (a kubeconfig on a closed port):
 * - a cert dir without secure serving, an empty one, or a value that is no boolean: a RangeError
 *   when the manager is built;
 * - secure serving without a folder: HTTPS with a certificate made in memory for localhost,
 *   127.0.0.1, ::1 and the host's name (a client skipping verification reads the metrics);
 *   plain HTTP on the port gets no answer; the probe server stays plain HTTP;
 * - with a folder: its certificate, verified against its CA;
 * - with `metricsAuth: 'kubernetes'` too: the authorizer still decides (401 without a token, 503
 *   with one the unreachable API server cannot review).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { pino } from 'pino';
import { memoryCaStore, selfManagedCertificates } from '../webhook/certificates.ts';
import type { ServingCertificate } from '../webhook/certificates.ts';
import { closedPort, unreachableKubeConfig } from './unreachable-cluster.test-support.ts';
import { Manager, type ManagerOptions } from './index.ts';

const log = pino({ level: 'silent' });

async function manager(extra: Partial<ManagerOptions> = {}): Promise<Manager> {
  return new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log, ...extra });
}

/** Runs `fn` with the manager started (its metrics and probe addresses), then stops it. */
async function started(m: Manager, fn: (metrics: string, probe: string) => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const running = m.start(stop.signal);
  try {
    const [metrics, probe] = await m.serverAddresses();
    await fn(metrics!, probe!);
  } finally {
    stop.abort();
    await running.catch(() => undefined);
  }
}

interface Answer { status: number; body: string; peer: X509Certificate }

function httpsGet(address: string, path: string, options: { ca?: string; token?: string } = {}): Promise<Answer> {
  const url = new URL(`https://${address}${path}`);
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname, port: url.port, path, agent: false, headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
    }, (res) => {
      const peer = (res.socket as unknown as { getPeerX509Certificate(): X509Certificate }).getPeerX509Certificate();
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Manager: metricsSecureServing', () => {
  it('refuses a cert dir without secure serving, an empty cert dir, and a value that is no boolean', async () => {
    await assert.rejects(manager({ metricsCertDir: '/etc/converge/metrics-certs' }), /metricsCertDir needs metricsSecureServing/);
    await assert.rejects(manager({ metricsSecureServing: true, metricsCertDir: ' ' }), RangeError);
    await assert.rejects(manager({ metricsSecureServing: 'yes' as unknown as boolean }), RangeError);
    await manager({ metricsSecureServing: false }); // the default, said out loud
  });

  it('without a folder: HTTPS with a certificate made in memory for localhost, 127.0.0.1, ::1 and the host name; plain HTTP gets nothing; probes stay plain HTTP', async () => {
    const m = await manager({ metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0', metricsSecureServing: true });
    await started(m, async (metrics, probe) => {
      const answer = await httpsGet(metrics, '/metrics');
      assert.equal(answer.status, 200);
      assert.match(answer.body, /^# TYPE workqueue_depth gauge$/m);
      const san = answer.peer.subjectAltName ?? '';
      for (const name of ['DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1', `DNS:${hostname()}`]) assert.ok(san.includes(name), `${name} in ${san}`);
      await assert.rejects(fetch(`http://${metrics}/metrics`), 'plain HTTP on the TLS port');
      assert.equal((await fetch(`http://${probe}/healthz`)).status, 200);
    });
  });

  it('with a folder: serves its certificate, verified against its CA; with metricsAuth the authorizer still decides', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-metrics-certs-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const stop = new AbortController();
    const got = Promise.withResolvers<ServingCertificate>();
    const issuing = selfManagedCertificates({ store: memoryCaStore(), hosts: ['127.0.0.1'] }).start(stop.signal, (c) => got.resolve(c));
    const cert = await got.promise;
    stop.abort();
    await issuing;
    writeFileSync(join(dir, 'tls.crt'), cert.certPem);
    writeFileSync(join(dir, 'tls.key'), cert.keyPem);
    const m = await manager({ metricsBindAddress: '127.0.0.1:0', metricsSecureServing: true, metricsCertDir: dir, metricsAuth: 'kubernetes' });
    await started(m, async (metrics) => {
      const refused = await httpsGet(metrics, '/metrics', { ca: cert.caPem! });
      assert.equal(refused.status, 401);
      assert.equal(refused.peer.fingerprint256, new X509Certificate(cert.certPem).fingerprint256);
      assert.equal((await httpsGet(metrics, '/metrics', { ca: cert.caPem!, token: 'some-token' })).status, 503, 'the cluster is unreachable: never allowed');
    });
  });
});
