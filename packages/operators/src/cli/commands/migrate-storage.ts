/**
 * `converge migrate-storage`: after an upgrade that changed a CRD's storage version, rewrite
 * every stored Microservice and DigitalHumanProvider in it and drop the old versions from
 * `status.storedVersions` (the runtime's `migrateStorage`: paginated, rate limited, idempotent,
 * resumable, safe while the operator runs). Ctrl-C stops after the current object; run again to
 * resume. Exit codes: 0 done, 1 refused, failed or stopped early (the message, on stderr, says
 * why), 2 usage, 130 stopped. stdout holds only the results of complete migrations.
 * @module
 */
import { KubeClient, StorageMigrationError, migrateStorage } from '@converge/runtime';
import type { StorageMigrationProgress } from '@converge/runtime';
import { kubeConfigFrom } from '../shared/kubeconfig-flag.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { stopSignal } from '../shared/stop-signal.ts';
import { processIO } from '../shared/command-io.ts';
import type { CommandIO } from '../shared/command-io.ts';

const CRDS: Record<string, string> = {
  microservices: 'microservices.platform.example.io',
  digitalhumanproviders: 'digitalhumanproviders.dhp.example.com',
};
const ALIASES: Record<string, string> = { ms: 'microservices', microservice: 'microservices', dhp: 'digitalhumanproviders', digitalhumanprovider: 'digitalhumanproviders' };

const HELP = `Usage: converge migrate-storage [--kind microservices|digitalhumanproviders|all] [--to <version>] [flags]

Rewrite every stored object of the Converge CRDs in their storage version, then remove the other
versions from status.storedVersions. Run it after applying CRDs with a new storage version (and
with the operator, which serves the conversion webhook, running). Idempotent and resumable: the
progress is kept in the CRD's annotation converge.dev/storage-migration; Ctrl-C and run again.

Flags:
  --kind <kind>          microservices (ms), digitalhumanproviders (dhp) or all (default all; repeatable)
  --to <version>         refuse unless this is the storage version (default v1)
  --page-size <n>        objects per list page (default 100)
  --qps <n>              requests per second towards the API server (default 20; burst 2×)
  --kubeconfig <path>    kubeconfig (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)
  --context <name>       kubeconfig context
  -h, --help             show this help
`;

/** What the command runs on (a seam: tests pass a `migrate` that stops early, and their own signal). */
export interface MigrateStorageDeps {
  migrate: typeof migrateStorage;
  signal: () => AbortSignal;
}

export async function run(argv: string[], io: CommandIO = processIO, deps: MigrateStorageDeps = { migrate: migrateStorage, signal: stopSignal }): Promise<number> {
  const parsed = parseCommandArgs('migrate-storage', HELP, argv, {
    kind: { type: 'string', multiple: true },
    to: { type: 'string', default: 'v1' },
    'page-size': { type: 'string', default: '100' },
    qps: { type: 'string', default: '20' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
    'max-pages': { type: 'string' },
  }, false, io);
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values } = parsed;
  // Own keys only, so that `--kind constructor` is an unknown kind named as typed (not Object's members).
  const kinds = (values.kind?.length ? values.kind : ['all']).flatMap((k) => (k === 'all' ? Object.keys(CRDS) : [Object.hasOwn(ALIASES, k) ? ALIASES[k]! : k]));
  const unknown = kinds.filter((k) => !Object.hasOwn(CRDS, k));
  if (unknown.length) {
    io.stderr(`converge migrate-storage: unknown kind ${unknown.join(', ')} (microservices, digitalhumanproviders or all)\n`);
    return 2;
  }
  const pageSize = Number(values['page-size']);
  const qps = Number(values.qps);
  // --max-pages (not in the help: stop after this many pages, as if interrupted) serves the resume test.
  const maxPages = values['max-pages'] ? Number(values['max-pages']) : undefined;
  if (!(Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= 1000) || !(qps > 0) || (maxPages !== undefined && !(Number.isInteger(maxPages) && maxPages >= 1))) {
    io.stderr('converge migrate-storage: --page-size must be a whole number 1–1000, --qps positive and --max-pages a whole number ≥ 1\n');
    return 2;
  }
  let client: KubeClient;
  try {
    const kubeConfig = kubeConfigFrom(values.kubeconfig);
    if (values.context) kubeConfig.setCurrentContext(values.context);
    client = new KubeClient({ kubeConfig, userAgent: 'converge-migrate-storage/0.1', qps, burst: Math.ceil(qps * 2) });
  } catch (err) {
    io.stderr(`converge migrate-storage: cannot load the kubeconfig: ${(err as Error).message}\n`);
    return 1;
  }
  const signal = deps.signal();
  const line = (p: StorageMigrationProgress) => `${p.crd}: ${p.seen} objects read, ${p.rewritten} rewritten in ${p.version}, ${p.skipped} changed or deleted meanwhile${p.resumed ? ' (resumed)' : ''}`;
  try {
    for (const k of [...new Set(kinds)]) {
      const name = CRDS[k]!;
      const started = performance.now();
      const result = await deps.migrate(client, name, {
        pageSize,
        expectStorageVersion: values.to,
        signal,
        ...(maxPages !== undefined ? { maxPages } : {}),
        onProgress: (p) => io.stderr(`${line(p)}\n`),
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (!result.complete) {
        // A failure (exit 1), so on stderr like every other: stdout holds only a finished migration's result.
        io.stderr(`converge migrate-storage: ${line(result)}; stopped early after ${seconds} s: run again to resume\n`);
        return 1;
      }
      io.stdout(`${line(result)} in ${seconds} s; storedVersions ${JSON.stringify(result.storedVersionsBefore)} → ${JSON.stringify(result.storedVersionsAfter)}\n`);
    }
    return 0;
  } catch (err) {
    if (signal.aborted) {
      io.stderr('converge migrate-storage: stopped; the progress is recorded, run again to resume\n');
      return 130;
    }
    if (err instanceof StorageMigrationError) {
      io.stderr(`converge migrate-storage: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await client.close();
  }
}
