import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { DEPLOY_DIR, renderManifests, run } from './manifests.ts';
import { runKubectl, type CommandIO } from '../shared/kubectl.ts';
import { ledgerShardNames } from '../../operators/provider/late-create-ledger-shards.ts';
import { defaultOperatorConfig } from '../../operators/operator-config.ts';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
const skip = hasKubectl ? false : 'kubectl is not on PATH';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any };

function docs(yaml: string): Obj[] {
  return parseAllDocuments(yaml).map((d) => d.toJS() as Obj).filter(Boolean);
}

function capture(): CommandIO & { out: string; err: string } {
  const io = { out: '', err: '', env: process.env, stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

const EXPECTED_RULES = [
  { apiGroups: ['platform.example.io'], resources: ['microservices'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['platform.example.io'], resources: ['microservices/status'], verbs: ['get', 'patch'] },
  { apiGroups: ['platform.example.io'], resources: ['microservices/finalizers'], verbs: ['update'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
  { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['dhp.example.com'], resources: ['digitalhumanproviders'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: ['dhp.example.com'], resources: ['digitalhumanproviders/status'], verbs: ['get', 'patch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];

function find(objs: Obj[], kind: string, name: string, namespace?: string): Obj {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace));
  assert.ok(found, `${kind} ${namespace ?? ''}/${name} missing`);
  return found;
}

function checkOperatorDeployment(objs: Obj[]): Obj {
  const deployment = find(objs, 'Deployment', 'converge', 'converge-system');
  assert.equal(deployment.spec.replicas, 2);
  const pod = deployment.spec.template.spec;
  assert.equal(pod.serviceAccountName, 'converge');
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.deepEqual(pod.securityContext.seccompProfile, { type: 'RuntimeDefault' });
  const [container] = pod.containers;
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(container.securityContext.capabilities, { drop: ['ALL'] });
  assert.ok(container.args.includes('run') && container.args.includes('--leader-elect'));
  assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz?exclude=caches-synced&exclude=watches-healthy', port: 'health' });
  assert.deepEqual(container.livenessProbe.httpGet, { path: '/healthz', port: 'health' });
  assert.deepEqual(
    container.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]),
    [['metrics', 8443], ['health', 8081], ['webhook', 9443]],
  );
  assert.ok(container.args.includes('--webhook-bind-address=:9443') && container.args.includes('--webhook-inject-ca'), 'self-managed webhook certificates by default');
  // The conversion webhook's Service, and the exact permissions its self-managed CA needs.
  const webhook = find(objs, 'Service', 'converge-webhook', 'converge-system');
  assert.equal(webhook.spec.ports[0].targetPort, 'webhook');
  // A replica's readiness is its webhook's (the only traffic it takes), not its caches': the first
  // list of a new build may itself need a conversion (objects still stored as v1alpha1 after an
  // upgrade). And the Service sends nothing to a replica not listening yet.
  assert.equal(webhook.spec.publishNotReadyAddresses, undefined);
  // The webhook keeps serving while the pod's endpoint is taken out of the Service (a conversion
  // sent to a replica that already refuses connections fails its client's request): the stop
  // begins after a preStop sleep.
  const preStopSeconds = pod.containers[0].lifecycle?.preStop?.sleep?.seconds as number | undefined;
  assert.ok(preStopSeconds !== undefined && preStopSeconds >= 3, `preStop sleep ${preStopSeconds}`);
  // The kubelet waits for the preStop sleep and the operator's own stop: the grace period of
  // in-flight reconciles, 10 s to abort, 2 s of Events, the Lease's release.
  assert.ok(pod.terminationGracePeriodSeconds >= preStopSeconds + defaultOperatorConfig.shutdownGraceMs / 1000 + 10 + 2 + 3, `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds}`);
  // The configuration is read once, at start: its ConfigMap is named by its content, so a change
  // rolls the pods (two replicas never run two configurations).
  const volume = pod.volumes.find((v: { name: string }) => v.name === 'config');
  assert.match(volume.configMap.name, /^converge-config-[a-z0-9]{10}$/);
  find(objs, 'ConfigMap', volume.configMap.name, 'converge-system');
  assert.deepEqual(find(objs, 'Role', 'converge-webhook', 'converge-system').rules, [
    { apiGroups: [''], resources: ['secrets'], resourceNames: ['converge-webhook-ca'], verbs: ['get', 'update'] },
  ]);
  assert.equal(find(objs, 'Secret', 'converge-webhook-ca', 'converge-system').data, undefined, 'installed empty');
  assert.deepEqual(find(objs, 'ClusterRole', 'converge-webhook').rules, [
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['microservices.platform.example.io', 'digitalhumanproviders.dhp.example.com'], verbs: ['get', 'patch'] },
  ]);
  checkMetricsAuth(objs, container);
  return deployment;
}

/**
 * The metrics endpoints behind TokenReview + SubjectAccessReview (ADR 0041): the flag, the reviews
 * the operator may create, the reader role; and over HTTPS (--metrics-secure on :8443, the
 * Service's port named https, as Kubebuilder names it).
 */
function checkMetricsAuth(objs: Obj[], container: { args: string[] }): void {
  assert.ok(container.args.includes('--metrics-auth=kubernetes'), 'the shipped operator protects its metrics');
  assert.ok(container.args.includes('--metrics-secure') && container.args.includes('--metrics-bind-address=:8443'), 'the shipped operator serves its metrics over HTTPS');
  assert.deepEqual(find(objs, 'Service', 'converge-metrics', 'converge-system').spec.ports, [{ name: 'https', port: 8443, targetPort: 'metrics', protocol: 'TCP' }]);
  assert.deepEqual(find(objs, 'ClusterRole', 'converge-metrics-auth').rules, [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ]);
  const binding = find(objs, 'ClusterRoleBinding', 'converge-metrics-auth');
  assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'converge-metrics-auth' });
  assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'converge', namespace: 'converge-system' }]);
  // For a scraper to bind; nothing is bound to it by the install.
  assert.deepEqual(find(objs, 'ClusterRole', 'converge-metrics-reader').rules, [{ nonResourceURLs: ['/metrics', '/debug/unconverged'], verbs: ['get'] }]);
  assert.ok(!objs.some((o) => (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') && o.roleRef?.name === 'converge-metrics-reader'));
}

test('cluster mode: CRDs, namespace, ServiceAccount, least-privilege ClusterRole, restricted operator', { skip }, async () => {
  const objs = docs(await renderManifests({ mode: 'cluster' }));
  find(objs, 'CustomResourceDefinition', 'microservices.platform.example.io');
  find(objs, 'CustomResourceDefinition', 'digitalhumanproviders.dhp.example.com');
  assert.equal(find(objs, 'Namespace', 'converge-system').metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  find(objs, 'ServiceAccount', 'converge', 'converge-system');
  assert.deepEqual(find(objs, 'ClusterRole', 'converge').rules, EXPECTED_RULES);
  const binding = find(objs, 'ClusterRoleBinding', 'converge');
  assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'converge', namespace: 'converge-system' }]);
  assert.deepEqual(find(objs, 'Role', 'converge-leader-election', 'converge-system').rules, [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
  ]);
  // The late-create ledger (ADR 0037), every shard of it (ADR 0040), in the operator's namespace only.
  assert.deepEqual(find(objs, 'Role', 'converge-operator-state', 'converge-system').rules, [
    { apiGroups: [''], resources: ['configmaps'], resourceNames: ledgerShardNames(), verbs: ['get', 'update'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
  ]);
  assert.deepEqual(find(objs, 'RoleBinding', 'converge-operator-state', 'converge-system').subjects, [{ kind: 'ServiceAccount', name: 'converge', namespace: 'converge-system' }]);
  const deployment = checkOperatorDeployment(objs);
  assert.ok(!deployment.spec.template.spec.containers[0].args.some((a: string) => a.startsWith('--namespace')));
  assert.equal(objs.filter((o) => o.kind === 'Role' && o.metadata.name === 'converge').length, 0);
});

test('no wildcard anywhere in the RBAC', { skip }, async () => {
  for (const mode of ['cluster', 'namespace'] as const) {
    for (const o of docs(await renderManifests({ mode }))) {
      if (o.kind !== 'Role' && o.kind !== 'ClusterRole') continue;
      for (const rule of o.rules) {
        for (const field of ['apiGroups', 'resources', 'verbs', 'nonResourceURLs']) assert.ok(!(rule[field] ?? []).some((v: string) => v.includes('*')), `${o.kind}/${o.metadata.name}`);
        assert.ok(rule.resources || rule.nonResourceURLs, `${o.kind}/${o.metadata.name}: a rule on resources or on non-resource URLs`);
      }
    }
  }
});

test('namespace mode: the same rules in a Role of the watched namespace, and --namespace on the operator', { skip }, async () => {
  const objs = docs(await renderManifests({ mode: 'namespace' }));
  assert.deepEqual(find(objs, 'Role', 'converge', 'default').rules, EXPECTED_RULES);
  assert.equal(find(objs, 'RoleBinding', 'converge', 'default').subjects[0].namespace, 'converge-system');
  // Cluster-wide only what the conversion webhook needs on the two named CRDs (components/cert-manager
  // removes even that), the two reviews of the metrics endpoints' authentication (no namespace of
  // their own), and the reader role a scraper binds.
  assert.deepEqual(objs.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding').map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
    'ClusterRole/converge-metrics-auth', 'ClusterRole/converge-metrics-reader', 'ClusterRole/converge-webhook',
    'ClusterRoleBinding/converge-metrics-auth', 'ClusterRoleBinding/converge-webhook',
  ]);
  const deployment = checkOperatorDeployment(objs);
  assert.ok(deployment.spec.template.spec.containers[0].args.includes('--namespace=default'));
});

test('namespace mode for other namespaces and another image', { skip }, async () => {
  const objs = docs(await renderManifests({ mode: 'namespace', namespaces: ['todo', 'shop'], image: 'ghcr.io/example/converge:0.1.0' }));
  for (const ns of ['todo', 'shop']) {
    assert.deepEqual(find(objs, 'Role', 'converge', ns).rules, EXPECTED_RULES);
    find(objs, 'RoleBinding', 'converge', ns);
  }
  assert.equal(objs.filter((o) => o.metadata.namespace === 'default').length, 0);
  const container = checkOperatorDeployment(objs).spec.template.spec.containers[0];
  assert.equal(container.image, 'ghcr.io/example/converge:0.1.0');
  assert.deepEqual(container.args.filter((a: string) => a.startsWith('--namespace')), ['--namespace=todo', '--namespace=shop']);
});

test('every kustomization renders; the samples hold todo-api and a provider with its Secret', { skip }, async () => {
  for (const dir of ['crds', 'base', 'overlays/cluster-mode', 'overlays/namespace-mode', 'overlays/cluster-mode-cert-manager', 'samples']) {
    const result = await runKubectl(['kustomize', `${DEPLOY_DIR}${dir}`]);
    assert.equal(result.code, 0, `${dir}: ${result.stderr}`);
  }
  const samples = docs((await runKubectl(['kustomize', `${DEPLOY_DIR}samples`])).stdout);
  assert.deepEqual(find(samples, 'Microservice', 'todo-api').spec, { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } });
  const provider = find(samples, 'DigitalHumanProvider', 'studio');
  const secret = find(samples, 'Secret', provider.spec.credentials.secretRef.name);
  assert.ok(secret.stringData[provider.spec.credentials.secretRef.key]);
  assert.match(provider.spec.endpoint, /^https:\/\//);
});

test('converge manifests: printing, help and usage errors', { skip }, async () => {
  const io = capture();
  assert.equal(await run(['--namespace', 'todo'], io), 0, io.err);
  assert.ok(docs(io.out).some((o) => o.kind === 'Role' && o.metadata.namespace === 'todo'));

  const help = capture();
  assert.equal(await run(['-h'], help), 0);
  assert.match(help.out, /^Usage: converge manifests/);

  for (const argv of [['--mode', 'cluster', '--namespace', 'x'], ['--mode', 'both'], ['--namespace', 'Not_A_Namespace'], ['--image', ''], ['extra'], ['--create-namespace']]) {
    const bad = capture();
    assert.equal(await run(argv, bad), 2, argv.join(' '));
    assert.equal(bad.out, '');
    assert.match(bad.err, /^converge manifests: /);
  }
});

test('--apply reports kubectl failures on stderr with exit code 1', { skip }, async () => {
  const io = capture();
  io.env = { ...process.env, KUBECONFIG: '/nonexistent/kubeconfig' };
  const code = await run(['--apply', '--kubeconfig', '/nonexistent/kubeconfig'], io);
  assert.equal(code, 1);
  assert.match(io.err, /kubectl could not read the cluster \(exit \d+\); nothing was applied/);
});

test('the shipped operator configuration is valid and matches the built-in defaults', async () => {
  const { readFile } = await import('node:fs/promises');
  const { parse } = await import('yaml');
  const { parseOperatorConfig, defaultOperatorConfig } = await import('../../operators/operator-config.ts');
  const config = parseOperatorConfig(parse(await readFile(`${DEPLOY_DIR}base/operator-config.yaml`, 'utf8')), 'deploy/base/operator-config.yaml');
  assert.deepEqual(config.microservice, defaultOperatorConfig.microservice);
});

test('the cert-manager overlay: the webhook certificate from cert-manager, no self-managed CA permissions', { skip }, async () => {
  const result = await runKubectl(['kustomize', `${DEPLOY_DIR}overlays/cluster-mode-cert-manager`]);
  assert.equal(result.code, 0, result.stderr);
  const objs = docs(result.stdout);
  const container = find(objs, 'Deployment', 'converge', 'converge-system').spec.template.spec.containers[0];
  assert.ok(container.args.includes('--webhook-cert-dir=/var/run/converge/webhook-certs'));
  assert.ok(!container.args.includes('--webhook-inject-ca'));
  assert.ok(container.volumeMounts.some((m: { name: string }) => m.name === 'webhook-certs'));
  // The serving certificate comes from a CA Issuer whose CA is a certificate of its own: a renewed
  // serving certificate keeps the trust anchor the cainjector put into the CRDs (issued straight
  // from a self-signed Issuer, each renewal changed the caBundle at once while the pod's mounted
  // files followed only at the kubelet's next sync: conversions refused in between).
  const serving = find(objs, 'Certificate', 'converge-webhook', 'converge-system') as unknown as { spec: { issuerRef: { kind: string; name: string }; isCA?: boolean } };
  assert.notEqual(serving.spec.isCA, true);
  const caIssuer = find(objs, serving.spec.issuerRef.kind, serving.spec.issuerRef.name, 'converge-system') as unknown as { spec: { ca?: { secretName: string }; selfSigned?: unknown } };
  assert.ok(caIssuer.spec.ca, `the serving certificate's issuer is a CA Issuer, not ${JSON.stringify(caIssuer.spec)}`);
  const ca = objs.find((o) => o.kind === 'Certificate' && (o as unknown as { spec: { secretName: string } }).spec.secretName === caIssuer.spec.ca!.secretName) as unknown as { spec: { isCA?: boolean; issuerRef: { kind: string; name: string } } } | undefined;
  assert.ok(ca?.spec.isCA, 'the CA Issuer\'s Secret is a CA certificate');
  assert.ok((find(objs, ca.spec.issuerRef.kind, ca.spec.issuerRef.name, 'converge-system') as unknown as { spec: { selfSigned?: unknown } }).spec.selfSigned !== undefined, 'the CA itself is self-signed');
  for (const name of ['microservices.platform.example.io', 'digitalhumanproviders.dhp.example.com']) {
    assert.equal((find(objs, 'CustomResourceDefinition', name).metadata as { annotations?: Record<string, string> }).annotations?.['cert-manager.io/inject-ca-from'], 'converge-system/converge-webhook');
  }
  assert.ok(!objs.some((o) => o.metadata?.name === 'converge-webhook' && ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].includes(o.kind)), 'no Secret or CRD permissions');
  checkMetricsAuth(objs, container);
  // The metrics endpoint serves a certificate from the same CA (a scraper verifies it with that
  // CA, Secret converge-webhook-ca-tls, instead of skipping verification), for the Service's names.
  const metrics = find(objs, 'Certificate', 'converge-metrics', 'converge-system') as unknown as { spec: { secretName: string; dnsNames: string[]; issuerRef: { kind: string; name: string } } };
  assert.deepEqual(metrics.spec.issuerRef, serving.spec.issuerRef);
  assert.ok(metrics.spec.dnsNames.includes('converge-metrics.converge-system.svc'), metrics.spec.dnsNames.join());
  assert.ok(container.args.includes('--metrics-cert-dir=/var/run/converge/metrics-certs'), container.args.join(' '));
  assert.ok(container.args.includes('--metrics-secure'));
  const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/var/run/converge/metrics-certs') as { name: string } | undefined;
  const volume = find(objs, 'Deployment', 'converge', 'converge-system').spec.template.spec.volumes.find((v: { name: string }) => v.name === mount?.name) as { secret?: { secretName: string } } | undefined;
  assert.equal(volume?.secret?.secretName, metrics.spec.secretName);
});

test('a namespace spelled as a YAML 1.1 boolean (yes, off, y) stays a string for kubectl, which reads YAML 1.1', async () => {
  const { parseAllDocuments: parseDocs } = await import('yaml');
  const text = await renderManifests({ mode: 'namespace', namespaces: ['yes', 'off', 'y'] });
  const namespaces = parseDocs(text, { version: '1.1' })
    .map((d) => (d.toJS() as { metadata?: { namespace?: unknown } } | null)?.metadata?.namespace)
    .filter((n) => n !== undefined);
  assert.ok(namespaces.length > 0);
  for (const ns of namespaces) assert.equal(typeof ns, 'string', `namespace ${JSON.stringify(ns)}`);
  assert.deepEqual([...new Set(namespaces)].sort(), ['converge-system', 'off', 'y', 'yes']);
});

test('printed YAML: every string some reader takes for something else is quoted; the rest stays plain', async () => {
  const YAML = await import('yaml');
  const { printYaml } = await import('../shared/printed-yaml.ts');
  const odd = ['yes', 'No', 'on', 'y', 'n', '~', 'null', '', '0o14', '0x1F', '1e3', '1_000', '12:30', '2001-12-14', '.inf', '-.5', '0644', 'true'];
  const plain = ['converge-system', 'team-a', 'converge:dev', 'ghcr.io/example/converge:0.1.0', 'yes-please'];
  const text = printYaml(YAML, { odd, plain, nested: { namespace: '0o14' } });
  for (const version of ['1.1', '1.2'] as const) {
    const back = YAML.parse(text, { version }) as { odd: unknown[]; plain: unknown[]; nested: { namespace: unknown } };
    assert.deepEqual(back.odd, odd, `read as YAML ${version}`);
    assert.deepEqual(back.plain, plain, `read as YAML ${version}`);
    assert.equal(back.nested.namespace, '0o14');
  }
  for (const p of plain) assert.match(text, new RegExp(`^  - ${p.replace(/[.]/g, '\\.')}$`, 'm'), `${p} plain`);
});
