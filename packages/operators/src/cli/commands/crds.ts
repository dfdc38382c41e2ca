/**
 * `converge crds`: prints (or applies) the CustomResourceDefinitions, generated from the TypeBox
 * schemas in `packages/operators/src/operators/<operator>/api/` (the list and the rendering are in
 * `../shared/crd-files.ts`). Printing reads the committed files, which a unit test keeps equal to
 * what the schemas generate, so it loads no schema and answers at once (issue 17, goal 5).
 *
 * Exit codes: 0 done, 1 kubectl failed, 2 usage error.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parseCommandArgs } from '../shared/command-args.ts';
import { applyServerSide, connectionFlags, kubectlFailure, processIO, runKubectl } from '../shared/kubectl.ts';
import type { CommandIO } from '../shared/kubectl.ts';
import { assetDir } from '../shared/package-assets.ts';

/** The committed files, in the order of `CRD_FILES` (`../shared/crd-files.ts`; a test checks both agree). */
export const CRD_FILE_NAMES = ['microservices.platform.example.io.yaml', 'digitalhumanproviders.dhp.example.com.yaml'] as const;

const HELP = `Usage: converge crds [--apply] [--kubeconfig <path>] [--context <name>]

Print the CustomResourceDefinitions (microservices.platform.example.io,
digitalhumanproviders.dhp.example.com), generated from the TypeScript schemas.

Options:
  --apply               apply them with kubectl apply --server-side and wait until established
  --kubeconfig <path>   kubeconfig for --apply (default: $KUBECONFIG, then ~/.kube/config)
  --context <name>      kubeconfig context for --apply
  -h, --help            show this help
`;

/**
 * The CRDs to apply: as published (conversion through the in-cluster `converge-webhook` Service),
 * except that a CRD already pointing at a webhook by URL (a local setup: `converge dev`, a local
 * control plane) keeps its URL and CA. Applying the Service form over a URL would leave both in
 * `clientConfig`, which the API server refuses ("exactly one of url or service is required").
 */
async function keepingLocalWebhooks(yaml: string, values: { kubeconfig?: string; context?: string }, io: CommandIO): Promise<string | undefined> {
  const { CRD_FILES, renderCrdFile } = await import('../shared/crd-files.ts');
  const files: string[] = [];
  for (const file of CRD_FILES) {
    const live = await runKubectl([...connectionFlags(values), 'get', 'crd', file.crd.metadata.name, '-o', 'json', '--ignore-not-found'], { env: io.env });
    if (live.code !== 0) {
      // The first contact with the cluster: what fails here is kubectl or the connection, not a refusal.
      const text = kubectlFailure('crds', live);
      io.stderr(`converge crds: ${text.endsWith('\n') ? text : `${text}\n`}`);
      return undefined;
    }
    const conversion = live.stdout.trim() ? (JSON.parse(live.stdout) as { spec?: { conversion?: { webhook?: { clientConfig?: { url?: string } } } } }).spec?.conversion : undefined;
    if (!conversion?.webhook?.clientConfig?.url) {
      files.push(renderCrdFile(file));
      continue;
    }
    io.stderr(`converge crds: ${file.crd.metadata.name} converts through ${conversion.webhook.clientConfig.url} (a local webhook); keeping it\n`);
    files.push(renderCrdFile({ ...file, crd: { ...file.crd, spec: { ...file.crd.spec, conversion: conversion as NonNullable<typeof file.crd.spec.conversion> } } }));
  }
  return files.length ? files.join('---\n') : yaml;
}

export async function run(argv: string[], io: CommandIO = processIO): Promise<number> {
  const parsed = parseCommandArgs('crds', HELP, argv, { apply: { type: 'boolean' }, kubeconfig: { type: 'string' }, context: { type: 'string' } }, false, io);
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values } = parsed;
  if (!values.apply) {
    // The committed files are what the schemas generate (a unit test keeps them in step), so
    // printing them needs neither TypeBox nor the runtime: the first line comes in ≈ 60 ms.
    io.stdout(await committedCrds());
    return 0;
  }
  const { CRD_FILES, renderAllCrds } = await import('../shared/crd-files.ts');
  const crds = await keepingLocalWebhooks(renderAllCrds(), values, io);
  if (crds === undefined || !(await applyServerSide('crds', crds, values, io))) return 1;
  const names = CRD_FILES.map((f) => `crd/${f.crd.metadata.name}`);
  const established = await runKubectl([...connectionFlags(values, { requestTimeout: false }), 'wait', '--for=condition=Established', '--timeout=60s', ...names], { env: io.env });
  io.stdout(established.stdout);
  if (established.code !== 0) {
    io.stderr(`converge crds: the CRDs did not become established:\n${established.stderr}`);
    return 1;
  }
  return 0;
}

/** The committed CRD files (`deploy/crds/`, shipped in the package), as one multi-document stream. */
export async function committedCrds(): Promise<string> {
  const dir = assetDir('deploy');
  const texts = await Promise.all(CRD_FILE_NAMES.map((name) => readFile(`${dir}crds/${name}`, 'utf8')));
  return texts.join('---\n');
}
