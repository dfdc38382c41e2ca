import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, KubeConfigError, loadKubeConfig } from './index.ts';

const made: string[] = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'converge-kubeconfig-'));
  made.push(d);
  return d;
}

const YAML_CONFIG = `apiVersion: v1
kind: Config
clusters:
- name: alpha
  cluster:
    server: https://alpha.example:6443
    certificate-authority: ca.pem
    tls-server-name: kubernetes
    proxy-url: http://proxy.example:3128
- name: plain
  cluster:
    server: "http://127.0.0.1:8001"
users:
- name: alice
  user:
    client-certificate: certs/alice.crt
    client-key: /abs/alice.key
- name: bob
  user:
    tokenFile: ./token
    as: system:admin
- name: exec-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: [--flag]
      env:
      - name: FOO
        value: bar
      interactiveMode: Never
      provideClusterInfo: true
contexts:
- name: a
  context: {cluster: alpha, user: alice, namespace: team-a}
- name: p
  context:
    cluster: plain
    user: bob
current-context: a
`;

describe('kubeconfig files', () => {
  it('reads YAML, resolving relative paths against the file and keeping every field', () => {
    const d = dir();
    writeFileSync(join(d, 'config'), YAML_CONFIG);
    const kc = loadKubeConfig(join(d, 'config'));
    assert.equal(kc.getCurrentContext(), 'a');
    assert.deepEqual(kc.getCurrentCluster(), {
      name: 'alpha',
      server: 'https://alpha.example:6443',
      caFile: join(d, 'ca.pem'),
      tlsServerName: 'kubernetes',
      proxyUrl: 'http://proxy.example:3128',
    });
    assert.deepEqual(kc.getCurrentUser(), { name: 'alice', certFile: join(d, 'certs/alice.crt'), keyFile: '/abs/alice.key' });
    assert.equal(kc.getContextObject('a')?.namespace, 'team-a');
    assert.deepEqual(kc.getUser('bob'), { name: 'bob', tokenFile: join(d, 'token'), impersonateUser: 'system:admin' });
    assert.deepEqual(kc.getUser('exec-user')?.exec, {
      command: join(d, 'bin/plugin'),
      apiVersion: 'client.authentication.k8s.io/v1',
      args: ['--flag'],
      env: [{ name: 'FOO', value: 'bar' }],
      provideClusterInfo: true,
      interactiveMode: 'Never',
    });
    kc.setCurrentContext('p');
    assert.equal(kc.getCurrentCluster()?.server, 'http://127.0.0.1:8001');
    assert.throws(() => kc.setCurrentContext('nope'), /context "nope" not found .* \(contexts: a, p\)/);
  });

  it('round-trips through exportConfig (JSON, which is read without the YAML parser)', () => {
    const d = dir();
    writeFileSync(join(d, 'config'), YAML_CONFIG);
    const kc = loadKubeConfig(join(d, 'config'));
    writeFileSync(join(d, 'exported.json'), kc.exportConfig());
    const again = loadKubeConfig(join(d, 'exported.json'));
    assert.deepEqual({ ...again, source: '' }, { ...kc, source: '' });
  });

  it('keeps a bare exec command for PATH lookup', () => {
    const d = dir();
    writeFileSync(join(d, 'config'), JSON.stringify({
      users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'gke-gcloud-auth-plugin' } } }],
    }));
    assert.equal(loadKubeConfig(join(d, 'config')).getUser('u')?.exec?.command, 'gke-gcloud-auth-plugin');
  });

  it('says what is wrong with a file', () => {
    const d = dir();
    assert.throws(() => loadKubeConfig(join(d, 'missing')), (e: Error) => e instanceof KubeConfigError && /kubeconfig .*missing does not exist/.test(e.message));
    writeFileSync(join(d, 'bad'), 'clusters: [unclosed');
    assert.throws(() => loadKubeConfig(join(d, 'bad')), /is not valid YAML/);
    writeFileSync(join(d, 'noname'), 'clusters:\n- cluster: {server: https://x}\n');
    assert.throws(() => loadKubeConfig(join(d, 'noname')), /clusters\[0\] has no name/);
    writeFileSync(join(d, 'list'), '- 1\n- 2\n');
    assert.throws(() => loadKubeConfig(join(d, 'list')), /a kubeconfig is a mapping/);
  });

  // A PEM pasted into a `-data` field (it wants the PEM base64-encoded) was decoded leniently into
  // bytes of nothing: the client then trusted no CA at all, and every request failed with a TLS
  // verification error that did not name the kubeconfig. kubectl refuses such a file.
  it('refuses a -data field that is not base64, as kubectl does, naming the field and not its value', () => {
    const d = dir();
    const pem = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZm9v\n-----END CERTIFICATE-----\n';
    const file = (data: Record<string, string>, where: 'cluster' | 'user') => {
      const body = JSON.stringify(data);
      return where === 'cluster'
        ? `clusters:\n- name: c\n  cluster: ${body}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`
        : `clusters:\n- name: c\n  cluster: {server: "https://c.example"}\nusers:\n- name: u\n  user: ${body}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`;
    };
    const cases: [string, Record<string, string>, 'cluster' | 'user', RegExp][] = [
      ['pem-ca', { server: 'https://c.example', 'certificate-authority-data': pem }, 'cluster', /clusters\[c\]\.cluster\.certificate-authority-data is not base64 \(at input byte 0\)/],
      ['unpadded-ca', { server: 'https://c.example', 'certificate-authority-data': 'TUlJQg' }, 'cluster', /certificate-authority-data is not base64 \(at input byte 4\)/],
      ['space-cert', { 'client-certificate-data': 'TUlJ Qg==', 'client-key-data': 'TUlJQg==' }, 'user', /users\[u\]\.user\.client-certificate-data is not base64 \(at input byte 4\)/],
      ['pem-key', { 'client-certificate-data': 'TUlJQg==', 'client-key-data': pem }, 'user', /users\[u\]\.user\.client-key-data is not base64/],
    ];
    for (const [name, data, where, message] of cases) {
      writeFileSync(join(d, name), file(data, where));
      assert.throws(() => loadKubeConfig(join(d, name)), (e: Error) => {
        assert.ok(e instanceof KubeConfigError, String(e));
        assert.match(e.message, message);
        assert.ok(e.message.includes(join(d, name)), `names the file: ${e.message}`);
        assert.doesNotMatch(e.message, /MIIB|TUlJ/, 'never the value');
        return true;
      }, name);
    }
    // Line breaks are no part of base64 (kubectl skips them, as base64 -w76 writes them).
    writeFileSync(join(d, 'wrapped'), file({ server: 'https://c.example', 'certificate-authority-data': 'TUlJ\r\nQg==\n' }, 'cluster'));
    assert.equal(Buffer.from(loadKubeConfig(join(d, 'wrapped')).getCurrentCluster()!.caData!, 'base64').toString(), 'MIIB');
  });
});

describe('finding the kubeconfig', () => {
  const cfg = (cluster: string, server: string, current?: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      clusters: [{ name: cluster, cluster: { server } }],
      users: [{ name: `${cluster}-user`, user: { token: `t-${cluster}` } }],
      contexts: [{ name: cluster, context: { cluster, user: `${cluster}-user` } }],
      ...(current ? { 'current-context': current } : {}),
      ...extra,
    });

  it('merges $KUBECONFIG as client-go: the first file naming a thing wins it, missing files are skipped', () => {
    const d = dir();
    writeFileSync(join(d, 'one'), cfg('shared', 'https://one', undefined));
    writeFileSync(join(d, 'two'), cfg('shared', 'https://two', 'shared', {
      clusters: [{ name: 'shared', cluster: { server: 'https://two' } }, { name: 'only-two', cluster: { server: 'https://only-two' } }],
    }));
    const kc = loadKubeConfig(undefined, { env: { KUBECONFIG: `${join(d, 'one')}:${join(d, 'gone')}:${join(d, 'two')}` }, homeDir: d });
    assert.equal(kc.getCurrentContext(), 'shared', 'current-context from the first file that sets it');
    assert.equal(kc.getCurrentCluster()?.server, 'https://one', 'cluster "shared" from the first file');
    assert.equal(kc.getCluster('only-two')?.server, 'https://only-two');
    assert.equal(kc.clusters.length, 2);
    assert.equal(kc.source, `${join(d, 'one')}:${join(d, 'two')}`);
  });

  it('uses ~/.kube/config when $KUBECONFIG is unset, and not when it is set', () => {
    const d = dir();
    mkdirSync(join(d, '.kube'));
    writeFileSync(join(d, '.kube', 'config'), cfg('home', 'https://home', 'home'));
    assert.equal(loadKubeConfig(undefined, { env: {}, homeDir: d }).getCurrentCluster()?.server, 'https://home');
    assert.throws(
      () => loadKubeConfig(undefined, { env: { KUBECONFIG: join(d, 'nope') }, homeDir: d }),
      new RegExp(`^KubeConfigError: no kubeconfig found: looked at \\$KUBECONFIG \\(${join(d, 'nope')}: missing\\), in-cluster \\(not in a pod`),
    );
  });

  it('falls back to the pod ServiceAccount, with the token file (re-read on rotation) and the namespace', () => {
    const d = dir();
    const sa = join(d, 'sa');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 'tok');
    writeFileSync(join(sa, 'ca.crt'), 'pem');
    writeFileSync(join(sa, 'namespace'), 'ops\n');
    const kc = loadKubeConfig(undefined, { env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, homeDir: d, serviceAccountDir: sa });
    assert.equal(kc.source, 'in-cluster');
    assert.deepEqual(kc.getCurrentCluster(), { name: 'in-cluster', server: 'https://[fd00::1]:443', caFile: join(sa, 'ca.crt') });
    assert.deepEqual(kc.getCurrentUser(), { name: 'in-cluster', tokenFile: join(sa, 'token') });
    assert.equal(kc.getContextObject('in-cluster')?.namespace, 'ops');
  });

  it('says where it looked when there is nothing (issue 18, item 4)', () => {
    const d = dir();
    assert.throws(
      () => loadKubeConfig(undefined, { env: {}, homeDir: d, serviceAccountDir: join(d, 'sa') }),
      {
        name: 'KubeConfigError',
        message: 'no kubeconfig found: looked at $KUBECONFIG (unset), ~/.kube/config (missing), in-cluster (not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset)',
      },
    );
    assert.throws(
      () => loadKubeConfig(undefined, { env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, homeDir: d, serviceAccountDir: join(d, 'sa') }),
      /in-cluster \(KUBERNETES_SERVICE_HOST is set but .*sa\/token is missing/,
    );
  });

  it('an empty ~/.kube/config counts as none', () => {
    const d = dir();
    mkdirSync(join(d, '.kube'));
    writeFileSync(join(d, '.kube', 'config'), '');
    assert.throws(() => loadKubeConfig(undefined, { env: {}, homeDir: d, serviceAccountDir: d }), /~\/\.kube\/config \(.*: no clusters, users or contexts\)/);
  });

  it('loadFromOptions builds one in code', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://c' }], users: [{ name: 'u', token: 'x' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    assert.equal(kc.getCurrentCluster()?.server, 'https://c');
    assert.equal(kc.getCurrentUser()?.token, 'x');
  });
});
