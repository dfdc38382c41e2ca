/**
 * The stage of the API-versions test (issue 13): a control plane of its own (the upgrade
 * changes cluster-wide CRDs, so it cannot share the suite's), the previous operator build taken
 * from git history, the CRDs as they were before v1, as they are now, and as a rollback leaves
 * them, and etcd's view of which version each object is stored in.
 * @module
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { CustomResourceDefinitionKind, isConflict } from '@converge/runtime';
import type { CustomResourceDefinition, CustomResourceDefinitionV1, KubeClient } from '@converge/runtime';
import { DigitalHumanProviderCrd, MicroserviceCrd } from '../../../packages/operators/src/index.ts';

const execFileP = promisify(execFile);
const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/** The last commit whose operators knew only v1alpha1 (before the package layout and v1). */
export const PREVIOUS_BUILD = '59cba79';

/**
 * The previous build's production dependencies, installed once from its own lock file (it used
 * `@kubernetes/client-node` and `undici`, which today's tree no longer has) and kept under
 * `~/.cache/converge/previous-build/<commit>/node_modules`.
 */
async function previousBuildModules(): Promise<string> {
  const home = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'converge', 'previous-build');
  const final = join(home, PREVIOUS_BUILD);
  if (existsSync(join(final, 'node_modules'))) return join(final, 'node_modules');
  mkdirSync(home, { recursive: true });
  const staging = mkdtempSync(join(home, `${PREVIOUS_BUILD}-`));
  try {
    await execFileP('bash', ['-c', `git -C ${JSON.stringify(ROOT)} archive ${PREVIOUS_BUILD} package.json package-lock.json | tar -x -C ${JSON.stringify(staging)}`]);
    await execFileP('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: staging, maxBuffer: 16 * 1024 * 1024 });
    if (!existsSync(join(final, 'node_modules'))) {
      rmSync(final, { recursive: true, force: true });
      renameSync(staging, final);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return join(final, 'node_modules');
}

/** The previous build's sources (`src/`, run directly on Node 24) in a temp folder, with its own production dependencies. */
export async function previousBuild(): Promise<{ main: string; crds: CustomResourceDefinitionV1[]; cleanup(): void }> {
  const modules = await previousBuildModules();
  const dir = mkdtempSync(join(tmpdir(), 'converge-previous-'));
  await execFileP('bash', ['-c', `git -C ${JSON.stringify(ROOT)} archive ${PREVIOUS_BUILD} src package.json | tar -x -C ${JSON.stringify(dir)}`]);
  symlinkSync(modules, join(dir, 'node_modules'));
  const crds: CustomResourceDefinitionV1[] = [];
  for (const file of ['deploy/crds/microservices.platform.example.io.yaml', 'deploy/crds/digitalhumanproviders.dhp.example.com.yaml']) {
    const { stdout } = await execFileP('git', ['-C', ROOT, 'show', `${PREVIOUS_BUILD}:${file}`]);
    for (const doc of parseAllDocuments(stdout)) crds.push(doc.toJS() as CustomResourceDefinitionV1);
  }
  const main = join(dir, 'src', 'cli', 'main.ts');
  if (!existsSync(main)) throw new Error(`${PREVIOUS_BUILD} has no src/cli/main.ts`);
  return { main, crds, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Today's CRDs pointing at a webhook by URL (both versions served, v1 the storage version). */
export function currentCrds(url: string, caPem: string): CustomResourceDefinitionV1[] {
  return [MicroserviceCrd, DigitalHumanProviderCrd].map((crd) => ({
    ...crd,
    spec: { ...crd.spec, conversion: { strategy: 'Webhook' as const, webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle: Buffer.from(caPem).toString('base64') } } } },
  }));
}

/** Rollback step 1: the same CRDs with v1alpha1 as the storage version (v1 still served, the webhook still converting). */
export function storageBackToV1alpha1(crds: CustomResourceDefinitionV1[]): CustomResourceDefinitionV1[] {
  return crds.map((crd) => ({ ...crd, spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, storage: v.name === 'v1alpha1' })) } }));
}

/** Rollback step 3: v1alpha1 only (today's v1alpha1 schema, so nothing the operator recorded is pruned), no conversion. */
export function v1alpha1Only(crds: CustomResourceDefinitionV1[]): CustomResourceDefinitionV1[] {
  return crds.map((crd) => ({
    ...crd,
    spec: {
      ...crd.spec,
      versions: crd.spec.versions.filter((v) => v.name === 'v1alpha1').map(({ deprecationWarning: _w, deprecated: _d, ...v }) => ({ ...v, storage: true })),
      conversion: { strategy: 'None' as const },
    },
  }));
}

/**
 * Replaces the CRDs (a PUT of the whole spec, as `kubectl replace` would: an apply would merge a
 * Service reference into a URL), then waits until they are served.
 */
export async function replaceCrds(client: KubeClient, crds: CustomResourceDefinitionV1[]): Promise<void> {
  for (const crd of crds) {
    for (let attempt = 0; ; attempt++) {
      const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name: crd.metadata.name }).catch(() => undefined);
      try {
        if (!live) await client.create(CustomResourceDefinitionKind, crd as unknown as CustomResourceDefinition);
        else await client.replace(CustomResourceDefinitionKind, { ...live, metadata: { ...live.metadata, labels: crd.metadata.labels }, spec: crd.spec } as CustomResourceDefinition);
        break;
      } catch (err) {
        if (!isConflict(err) || attempt > 5) throw err;
      }
    }
  }
  for (const crd of crds) {
    for (let i = 0; ; i++) {
      const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name: crd.metadata.name });
      const served = (live.spec as { versions: { name: string }[] }).versions.map((v) => v.name).join(',');
      const established = (live.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      if (established && served === crd.spec.versions.map((v) => v.name).join(',')) break;
      if (i > 300) throw new Error(`CRD ${crd.metadata.name} not serving ${crd.spec.versions.map((v) => v.name)} after 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** `status.storedVersions` of a CRD. */
export { storedApiVersions, storedVersions } from '../../support/crd-storage.ts';
