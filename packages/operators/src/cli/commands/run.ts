/**
 * `converge run`: runs the Microservice and DigitalHumanProvider operators against a cluster,
 * in-cluster or with `--kubeconfig`, until SIGINT/SIGTERM (graceful: the lease is released and
 * in-flight reconciles finish). Exits 1, with one line on stderr saying why, when leadership is
 * lost, when a part cannot start (a busy metrics or probe port), or when reconciles cannot be
 * stopped (then at once, even if a stuck reconcile still holds the event loop), so that the pod
 * is restarted. Bad flags (a level, an operator, a bind address or a --metrics-auth it does not know;
 * --metrics-cert-dir without --metrics-secure, or empty) exit 2 before anything starts.
 * @module
 */
import { readFileSync, existsSync } from 'node:fs';
import { DrainTimeoutError, LeadershipLostError, ListenError, RunnableFailedError, parseBindAddress } from '@converge/runtime';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { runOperatorProcess } from '../../operators/operator-process.ts';
import { defaultWebhookHosts } from '../../operators/conversion-webhook.ts';
import type { WebhookSettings } from '../../operators/conversion-webhook.ts';
import { loadOperatorConfig, defaultOperatorConfig, OperatorConfigError } from '../../operators/operator-config.ts';
import { kubeConfigFrom } from '../shared/kubeconfig-flag.ts';
import { parseCommandArgs } from '../shared/command-args.ts';
import { stopSignal } from '../shared/stop-signal.ts';
import { LOG_LEVEL_CHOICES, logLevelError } from '../shared/log-level.ts';

const HELP = `Usage: converge run [flags]

Runs the operators until SIGINT/SIGTERM.

Flags:
  --kubeconfig <path>                  kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  --namespace <ns>                     watch only this namespace (repeatable; default: all namespaces)
  --leader-elect                       elect a leader among replicas (Lease in --leader-election-namespace)
  --leader-election-namespace <ns>     default: the pod's namespace, else "default"
  --leader-election-id <name>          Lease name (default "converge-operators")
  --metrics-bind-address <addr>        /metrics and /debug/unconverged (default ":8080"; "0" disables)
  --metrics-auth <none|kubernetes>     who may read them: anyone (default "none"), or a bearer token
                                       the API server authenticates whose user may get the path
                                       (TokenReview + SubjectAccessReview; the shipped manifests)
  --metrics-secure                     serve them over HTTPS (TLS 1.2+), with a self-signed certificate
                                       made in memory at start unless --metrics-cert-dir gives one
  --metrics-cert-dir <dir>             with --metrics-secure: tls.crt and tls.key (reloaded on renewal)
  --health-probe-bind-address <addr>   /healthz and /readyz (default ":8081"; "0" disables)
  --config <file>                      operator configuration (YAML): platform defaults, intervals, limits
  --operators <list>                   comma-separated: microservice,provider (default both)
  --webhook-bind-address <addr>        the CRD conversion webhook (HTTPS; default ":9443"; "0" disables)
  --webhook-cert-dir <dir>             tls.crt and tls.key from cert-manager (reloaded on renewal)
  --webhook-ca-secret <name>           self-managed CA in this Secret of the pod's namespace
                                       (default in a pod: converge-webhook-ca; elsewhere a folder
                                       under ~/.cache/converge/webhook-ca)
  --webhook-ca-dir <dir>               self-managed CA in this folder instead
  --webhook-inject-ca                  write the self-managed CA into the CRDs' caBundle
  --webhook-url <url>                  with --webhook-inject-ca: point the CRDs at this URL (local runs)
  --log-level <level>                  ${LOG_LEVEL_CHOICES} (default info)
  -h, --help                           show this help
`;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs('run', HELP, argv, {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string', multiple: true },
    'leader-elect': { type: 'boolean', default: false },
    'leader-election-namespace': { type: 'string' },
    'leader-election-id': { type: 'string', default: 'converge-operators' },
    'metrics-bind-address': { type: 'string', default: ':8080' },
    'metrics-auth': { type: 'string', default: 'none' },
    'metrics-secure': { type: 'boolean', default: false },
    'metrics-cert-dir': { type: 'string' },
    'health-probe-bind-address': { type: 'string', default: ':8081' },
    config: { type: 'string' },
    operators: { type: 'string', default: 'microservice,provider' },
    'log-level': { type: 'string', default: 'info' },
    'webhook-bind-address': { type: 'string', default: ':9443' },
    'webhook-cert-dir': { type: 'string' },
    'webhook-ca-secret': { type: 'string' },
    'webhook-ca-dir': { type: 'string' },
    'webhook-inject-ca': { type: 'boolean', default: false },
    'webhook-url': { type: 'string' },
  });
  if (args.exitCode !== undefined) return args.exitCode;
  const { values } = args;
  const badLevel = logLevelError('run', values['log-level']);
  if (badLevel) {
    process.stderr.write(badLevel);
    return 2;
  }
  const operators = values.operators.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = operators.filter((o) => o !== 'microservice' && o !== 'provider');
  if (unknown.length) {
    process.stderr.write(`converge run: unknown operator(s) ${unknown.join(', ')}; use microservice, provider\n`);
    return 2;
  }
  for (const flag of ['metrics-bind-address', 'health-probe-bind-address', 'webhook-bind-address'] as const) {
    try {
      parseBindAddress(values[flag]);
    } catch (err) {
      process.stderr.write(`converge run: --${flag}: ${(err as Error).message}\n`);
      return 2;
    }
  }
  const metricsAuth = values['metrics-auth'];
  if (metricsAuth !== 'none' && metricsAuth !== 'kubernetes') {
    process.stderr.write(`converge run: --metrics-auth must be none or kubernetes, not ${JSON.stringify(metricsAuth.slice(0, 40))}\n`);
    return 2;
  }
  const metricsCertDir = values['metrics-cert-dir'];
  if (metricsCertDir !== undefined && metricsCertDir.trim() === '') {
    process.stderr.write('converge run: --metrics-cert-dir must name a folder (with tls.crt and tls.key)\n');
    return 2;
  }
  if (metricsCertDir !== undefined && !values['metrics-secure']) {
    process.stderr.write('converge run: --metrics-cert-dir needs --metrics-secure (without it the metrics are plain HTTP)\n');
    return 2;
  }
  let config = defaultOperatorConfig;
  try {
    if (values.config) config = await loadOperatorConfig(values.config);
  } catch (err) {
    if (!(err instanceof OperatorConfigError)) throw err;
    process.stderr.write(`converge run: ${err.message}\nNothing was started.\n`);
    return 1;
  }
  const kubeConfig = kubeConfigFrom(values.kubeconfig);
  const signal = stopSignal();
  if (signal.aborted) return 0; // told to stop while starting
  try {
    await runOperatorProcess(
      {
        kubeConfig,
        namespaces: values.namespace ?? [],
        leaderElection: values['leader-elect'] ? { namespace: values['leader-election-namespace'] ?? podNamespace() ?? 'default', name: values['leader-election-id'] } : false,
        metricsBindAddress: values['metrics-bind-address'],
        metricsAuth,
        metricsSecureServing: values['metrics-secure'],
        ...(metricsCertDir !== undefined ? { metricsCertDir } : {}),
        healthProbeBindAddress: values['health-probe-bind-address'],
        config,
        operators: operators as ('microservice' | 'provider')[],
        logLevel: values['log-level'],
        webhook: webhookSettings(values),
      },
      signal,
    );
    return 0;
  } catch (err) {
    if (err instanceof LeadershipLostError) {
      process.stderr.write('converge run: leadership lost; exiting so that this replica restarts\n');
      return 1;
    }
    if (err instanceof DrainTimeoutError) {
      process.stderr.write(`converge run: ${err.message}\n`);
      exitSoon(1); // the stuck reconcile may keep the event loop alive for ever
      return 1;
    }
    if (err instanceof RunnableFailedError) {
      process.stderr.write(`converge run: ${err.message}${hintFor(err.cause)}\n`);
      return 1;
    }
    throw err;
  }
}

/** The flag that fixes a failed server, for the error line. */
function hintFor(cause: unknown): string {
  if (!(cause instanceof ListenError)) return '';
  const flag = ({ metrics: '--metrics-bind-address', probe: '--health-probe-bind-address', webhook: '--webhook-bind-address' } as Record<string, string | undefined>)[cause.server];
  return flag ? `; choose another address with ${flag} (or 0 to disable it)` : '';
}

/** Exits with `code` once the current turn of the event loop is done, whatever still holds it. */
function exitSoon(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 100).unref();
}

/**
 * The conversion webhook from the flags: cert-manager's folder when given; else a self-managed
 * CA, in a Secret of the pod's namespace when running in a pod (every replica shares it), else in
 * a folder of the user's cache (a laptop run never creates anything in the cluster for it).
 */
function webhookSettings(values: Record<string, string | boolean | string[] | undefined>): WebhookSettings {
  const namespace = podNamespace();
  const caSecret = values['webhook-ca-secret'] as string | undefined;
  const caDir = values['webhook-ca-dir'] as string | undefined;
  const cacheDir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'converge', 'webhook-ca');
  return {
    bindAddress: values['webhook-bind-address'] as string,
    ...(values['webhook-cert-dir'] ? { certDir: values['webhook-cert-dir'] as string } : {}),
    ...(caSecret ? { caSecret: { namespace: namespace ?? 'default', name: caSecret } } : {}),
    ...(!caSecret && caDir ? { caDir } : {}),
    ...(!caSecret && !caDir && !values['webhook-cert-dir'] ? (namespace ? { caSecret: { namespace, name: 'converge-webhook-ca' } } : { caDir: cacheDir }) : {}),
    ...(namespace ? { hosts: defaultWebhookHosts(namespace) } : {}),
    injectCa: Boolean(values['webhook-inject-ca']),
    ...(values['webhook-url'] ? { url: values['webhook-url'] as string } : {}),
  };
}

function podNamespace(): string | undefined {
  if (process.env.POD_NAMESPACE) return process.env.POD_NAMESPACE;
  const file = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}
