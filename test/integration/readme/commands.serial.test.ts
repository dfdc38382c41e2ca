/**
 * Every command in the README's shell blocks works as written (issue 12, item 19): the blocks are
 * read from README.md, each command line (and each alternative given in a `# or: …` comment) is
 * looked up in the table below, and run — from the repository root, in bash, against the local
 * control plane, which a temporary HOME makes `~/.kube/config` (so `--kubeconfig ~/.kube/config`
 * and kubectl's default both reach it; KUBECONFIG is unset). A command the table does not know
 * fails the test: a new README command must be classified (run, or skipped with the reason and
 * the test that covers it).
 *
 * Serial: the install manifests own cluster-wide names (namespace converge-system, ClusterRole
 * converge), as in test/integration/deploy/manifests.serial.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { namespaceGone, testCluster } from '../../support/cluster.ts';
import { kubeconfigPath, testClient } from '../../support/operator-harness.ts';
import { usePublishedCrds } from '../../support/suite-webhook.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** How each README command is checked. */
type Policy =
  | { run: 'exit-0' }
  /**
   * A long-running command: started, it must log `ready`; then Ctrl-C (SIGINT to its process
   * group, as a terminal sends it) must stop it cleanly: `stopped` logged, no error line. (npx
   * itself then ends by the signal, as it does in a terminal.)
   */
  | { run: 'until-working'; ready: RegExp; stopped: RegExp }
  | { skip: string };

const POLICY: Record<string, Policy> = {
  'npm start': { skip: 'builds and starts a second control plane and runs until Ctrl-C; test/e2e/dev.test.ts runs it as `converge dev --no-ui --exit-when-ready`' },
  'npm test': { skip: 'is the suite this test belongs to' },
  'npx converge crds --apply': { run: 'exit-0' },
  'kubectl apply -k deploy/crds/': { run: 'exit-0' },
  'kubectl apply -k deploy/overlays/cluster-mode': { run: 'exit-0' },
  'kubectl apply -k deploy/overlays/namespace-mode': { run: 'exit-0' },
  'npx converge run --kubeconfig ~/.kube/config': { run: 'until-working', ready: /"msg":"starting workers"/, stopped: /"msg":"manager stopped"/ },
  'npx converge run --kubeconfig ~/.kube/config --namespace team-a --leader-elect': { run: 'until-working', ready: /"msg":"starting workers"/, stopped: /"msg":"manager stopped"/ },
  'npm run pack': { run: 'exit-0' },
  'npx converge providers -A --region ap-northeast-1 -o name | head -1': { run: 'exit-0' },
  'kubectl get dhp -A --field-selector spec.region=ap-northeast-1,status.usable=true --sort-by=.status.usage.quotaRemaining -o name | tac': { run: 'exit-0' },
  'kubectl -n converge-system rollout status deployment/converge': { run: 'exit-0' },
  'npx converge migrate-storage': { run: 'exit-0' },
  'kubectl apply -f deploy/dashboard/clusterrole.yaml': { run: 'exit-0' },
  'npx converge dashboard --kubeconfig prod-eu=~/.kube/eu.yaml --kubeconfig prod-ap=~/.kube/ap.yaml': { skip: 'needs two real clusters\' kubeconfigs; test/integration/dashboard/browser.test.ts runs converge dashboard over two control planes with two --kubeconfig NAME=PATH flags' },
  'npx converge init my-operator --kind Widget --group example.com': { skip: 'writes a project into the working directory; test/packaging/packages.test.ts runs converge init from the installed tarball and the scaffold\'s own npm install, typecheck, test and start' },
  'docker build -t converge:dev .': { skip: 'no Docker engine on these machines; test/image/image.test.ts builds the same Dockerfile with podman and runs it' },
  'npx converge uninstall --dry-run': { skip: 'its verdict depends on what else the shared control plane holds (providers, stored versions); test/integration/deploy/uninstall.serial.test.ts runs it against an install' },
  'npx converge uninstall': { skip: 'would remove the install the commands after it use; test/integration/deploy/uninstall.serial.test.ts runs it against an install, refusals included' },
  'npm run image': { skip: 'test/image/image.test.ts calls the same buildImage() and runs the image it builds' },
  'kubectl annotate dhp studio dhp.example.com/abandon-instance=inst-621cbce6d7eacaeb dhp.example.com/abandoned-by="alice@example.com: vendor account closed (OPS-123)"': {
    skip: 'needs a provider named studio blocked in deletion with that instance; test/integration/provider/deletion.test.ts runs this command against one',
  },
};

/** Command lines of the README's sh blocks, with `# or: <command>` alternatives, comments stripped. */
function readmeCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/^[ \t]*```(?:sh|bash|shell)\n([\s\S]*?)^[ \t]*```/gm)) {
    for (const raw of block[1]!.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const hash = line.search(/\s#\s/);
      const command = (hash < 0 ? line : line.slice(0, hash)).trim();
      if (command) commands.push(command);
      const alternative = hash < 0 ? undefined : /#\s*or:\s*(.+)$/.exec(line.slice(hash))?.[1]?.trim();
      if (alternative) commands.push(alternative);
    }
  }
  return commands;
}

interface Ran { code: number | null; signal: NodeJS.Signals | null; out: string }

function runShell(command: string, env: NodeJS.ProcessEnv, policy: Extract<Policy, { run: string }>): Promise<Ran> {
  return new Promise((resolve) => {
    // A process group of its own, so the signal reaches the command behind bash and npx.
    const child = spawn('bash', ['-c', `exec ${command}`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let stopping = false;
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (policy.run === 'until-working' && !stopping && policy.ready.test(out)) {
        stopping = true;
        process.kill(-child.pid!, 'SIGINT');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

test('the README lists only commands this test knows', () => {
  const commands = readmeCommands(readFileSync(join(root, 'README.md'), 'utf8'));
  assert.ok(commands.length >= 8, `found ${commands.length} commands`);
  const unknown = commands.filter((c) => !(c in POLICY));
  assert.deepEqual(unknown, [], 'classify new README commands in POLICY (run them, or say why not and which test covers them)');
});

test('every README command that can run here works as written', { timeout: 600_000 }, async (t) => {
  const cluster = await testCluster();
  // The install tests before this one leave converge-system being deleted; the README applies it anew.
  await namespaceGone('converge-system');
  // The README installs the published CRDs (conversion through the in-cluster Service).
  const admin = testClient();
  t.after(() => admin.close());
  await usePublishedCrds(t, admin);
  const home = mkdtempSync(join(tmpdir(), 'converge-readme-'));
  mkdirSync(join(home, '.kube'));
  copyFileSync(kubeconfigPath(), join(home, '.kube', 'config'));
  t.after(async () => {
    rmSync(home, { recursive: true, force: true });
    for (const path of [
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/converge',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/converge-webhook',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge-webhook',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/converge-metrics-auth',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge-metrics-auth',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge-metrics-reader',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/converge-dashboard-viewer',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/converge',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/converge',
      '/apis/coordination.k8s.io/v1/namespaces/default/leases/converge-operators',
      '/api/v1/namespaces/converge-system',
    ]) await cluster.request('DELETE', path);
  });
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, npm_config_offline: 'true', NO_COLOR: '1' };
  delete env.KUBECONFIG;
  for (const name of Object.keys(env)) if (name.startsWith('CONVERGE_')) delete env[name];

  const commands = readmeCommands(readFileSync(join(root, 'README.md'), 'utf8'));
  let ran = 0;
  for (const command of commands) {
    const policy = POLICY[command];
    if (!policy || 'skip' in policy) {
      t.diagnostic(`not run: ${command} (${policy ? policy.skip : 'unknown'})`);
      continue;
    }
    const result = await runShell(command, env, policy);
    const transcript = `$ ${command}\n${result.out.slice(-3_000)}`;
    if (policy.run === 'until-working') {
      assert.match(result.out, policy.ready, `${command} never got to work:\n${transcript}`);
      assert.match(result.out, policy.stopped, `${command} did not stop cleanly on Ctrl-C:\n${transcript}`);
      assert.ok(!/"level":"(error|fatal)"/.test(result.out), `${command} logged an error:\n${transcript}`);
      assert.ok(result.code === 0 || result.signal === 'SIGINT' || result.code === 130, `${command} exited ${result.code ?? result.signal}:\n${transcript}`);
    } else {
      assert.equal(result.code, 0, `${command} exited ${result.code ?? result.signal}:\n${transcript}`);
    }
    t.diagnostic(`ok: ${command}`);
    ran++;
  }
  assert.ok(ran >= 6, `ran ${ran} commands`);
});
