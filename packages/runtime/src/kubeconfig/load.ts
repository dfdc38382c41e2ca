/**
 * `loadKubeConfig`: finds the kubeconfig as kubectl does and merges it as client-go does.
 *
 * Order: an explicit path (only that file, which must exist); else every file of `$KUBECONFIG`
 * (a `:`-separated list; missing files are skipped); else `~/.kube/config`; else, when none of
 * these holds anything, the in-cluster configuration (the pod's ServiceAccount). Merging, as
 * client-go's `ClientConfigLoadingRules`: the first file that names a cluster, user or context
 * wins it, and the first file that sets `current-context` sets it.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, KubeConfigError, readKubeconfigFile } from './kubeconfig.ts';
import type { KubeConfigOptions } from './kubeconfig.ts';

/** Where a pod's ServiceAccount credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadKubeConfigOptions {
  /** The environment to read `KUBECONFIG` and `KUBERNETES_SERVICE_*` from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** The home folder for `~/.kube/config` (default `os.homedir()`). */
  homeDir?: string;
  /** The ServiceAccount mount for the in-cluster configuration (default `SERVICE_ACCOUNT_DIR`). */
  serviceAccountDir?: string;
}

/**
 * Loads the kubeconfig at `path`, or finds one (see the module comment). Throws a
 * `KubeConfigError` that says where it looked when there is none.
 */
export function loadKubeConfig(path?: string, options: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    kc.loadFromFile(path);
    return kc;
  }
  const env = options.env ?? process.env;
  const looked: string[] = [];
  const list = env.KUBECONFIG;
  if (list) {
    const files = list.split(':').filter(Boolean);
    const present = files.filter((f) => existsSync(f));
    if (present.length > 0) {
      kc.loadFromOptions(mergeKubeconfigs(present.map((f) => readKubeconfigFile(f))));
      kc.source = present.join(':');
      if (!isEmpty(kc)) return kc;
      looked.push(`$KUBECONFIG (${present.join(', ')}: no clusters, users or contexts)`);
    } else {
      looked.push(`$KUBECONFIG (${files.join(', ')}: ${files.length === 1 ? 'missing' : 'none exists'})`);
    }
  } else {
    looked.push('$KUBECONFIG (unset)');
    const home = join(options.homeDir ?? homedir(), '.kube', 'config');
    if (existsSync(home)) {
      kc.loadFromFile(home);
      if (!isEmpty(kc)) return kc;
      looked.push(`~/.kube/config (${home}: no clusters, users or contexts)`);
    } else {
      looked.push(`~/.kube/config (missing)`);
    }
  }
  const inCluster = inClusterConfig(env, options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  if (typeof inCluster === 'string') {
    looked.push(`in-cluster (${inCluster})`);
    throw new KubeConfigError(`no kubeconfig found: looked at ${looked.join(', ')}`);
  }
  kc.loadFromOptions(inCluster);
  kc.source = 'in-cluster';
  return kc;
}

/**
 * The pod's ServiceAccount as a kubeconfig (server from `KUBERNETES_SERVICE_HOST`/`_PORT`, the
 * token *file*, so that rotated tokens are read again, the mounted CA, the pod's namespace), or
 * why there is none.
 */
export function inClusterConfig(env: Record<string, string | undefined>, dir = SERVICE_ACCOUNT_DIR): KubeConfigOptions | string {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) return 'not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset';
  const tokenFile = join(dir, 'token');
  if (!existsSync(tokenFile)) return `KUBERNETES_SERVICE_HOST is set but ${tokenFile} is missing (is a ServiceAccount token mounted?)`;
  const caFile = join(dir, 'ca.crt');
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    clusters: [{ name: 'in-cluster', server, ...(existsSync(caFile) ? { caFile } : {}) }],
    users: [{ name: 'in-cluster', tokenFile }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', ...(namespace ? { namespace } : {}) }],
    currentContext: 'in-cluster',
  };
}

/** client-go's merge: the first definition of each name wins; the first `current-context` wins. */
export function mergeKubeconfigs(configs: KubeConfigOptions[]): KubeConfigOptions {
  const firstByName = <T extends { name: string }>(lists: T[][]): T[] => {
    const seen = new Map<string, T>();
    for (const list of lists) for (const item of list) if (!seen.has(item.name)) seen.set(item.name, item);
    return [...seen.values()];
  };
  return {
    clusters: firstByName(configs.map((c) => c.clusters)),
    users: firstByName(configs.map((c) => c.users)),
    contexts: firstByName(configs.map((c) => c.contexts)),
    currentContext: configs.find((c) => c.currentContext)?.currentContext ?? '',
  };
}

function isEmpty(kc: KubeConfig): boolean {
  return kc.clusters.length === 0 && kc.users.length === 0 && kc.contexts.length === 0;
}
