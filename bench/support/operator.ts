/**
 * The operator under benchmark: `converge run` in a child process (its own event loop and
 * connections, as in production; the shipped build by default, see shipped-cli.ts), restricted to one namespace, with a config file written for
 * the scenario, metrics on a free loopback port, and optionally a CPU profile.
 * @module
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePorts } from '@converge/envtest';
import { startChild } from './child-process.ts';
import { convergeScript } from './shipped-cli.ts';
import { OPERATOR_NODE_FLAGS } from '../../packages/operators/src/operators/node-flags.ts';
import type { BenchChild } from './child-process.ts';
import { scrape } from './prometheus.ts';
import type { Sample } from './prometheus.ts';


/** The User-Agent of the operator's client (packages/operators/src/operators/operator-process.ts). */
export const OPERATOR_USER_AGENT = 'converge-operator';

export interface OperatorOptions {
  name: string;
  kubeconfigPath: string;
  namespace: string;
  operators: ('microservice' | 'provider')[];
  /** The operator configuration file's content (see packages/operators/src/operators/operator-config.ts). */
  config: Record<string, unknown>;
  outDir: string;
  profileDir?: string;
}

export interface RunningOperator extends BenchChild {
  readonly metricsUrl: string;
  metrics(): Promise<Sample[]>;
}

let nodeFlagsOverride: readonly string[] | undefined;

/** Starts later operators with these Node.js flags instead of the image's (bench/main.ts, `--operator-node-flags`). */
export function useOperatorNodeFlags(flags: readonly string[] | undefined): void {
  nodeFlagsOverride = flags;
}

/** The Node.js flags the benchmarked operator runs with. */
export function operatorNodeFlags(): readonly string[] {
  return nodeFlagsOverride ?? OPERATOR_NODE_FLAGS;
}

export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const configPath = join(options.outDir, `${options.name}.config.yaml`);
  writeFileSync(configPath, stringify(options.config));
  const [port] = await freePorts(1);
  const metricsUrl = `http://127.0.0.1:${port}`;
  const child = startChild({
    name: options.name,
    script: await convergeScript(),
    // As the image starts it (Dockerfile ENTRYPOINT; ADR 0034).
    nodeFlags: operatorNodeFlags(),
    args: [
      'run',
      '--kubeconfig', options.kubeconfigPath,
      '--namespace', options.namespace,
      '--operators', options.operators.join(','),
      '--config', configPath,
      '--metrics-bind-address', `127.0.0.1:${port}`,
      '--health-probe-bind-address', '0',
      // Benchmarks use v1 only: no conversion is needed, and replicas must not share a port.
      '--webhook-bind-address', '0',
      '--log-level', 'warn',
    ],
    outDir: options.outDir,
    ...(options.profileDir ? { profileDir: options.profileDir } : {}),
  });
  // Wait until the metrics server answers (the process is up and the manager built).
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await scrape(metricsUrl);
      break;
    } catch (err) {
      const code = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r(undefined), 100))]);
      if (code !== undefined) throw new Error(`operator ${options.name} exited (${code}) before serving metrics; see ${child.logPath}`);
      if (Date.now() > deadline) throw new Error(`operator ${options.name}: metrics not served within 60 s (${(err as Error).message}); see ${child.logPath}`);
    }
  }
  return { ...child, metricsUrl, metrics: () => scrape(metricsUrl) };
}
