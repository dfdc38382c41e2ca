/**
 * CLI start-up (issue 17, goal 5): how long after its spawn `converge status`, `explain` and
 * `crds` print their first output, run as they ship (the packed build, as the image and `npx`
 * run them). Each command runs several times one after the other against a namespace holding
 * one Microservice; the time runs from spawn to the first byte on stdout, and to exit. A Node
 * process that only prints is measured the same way, so the part Node itself takes is visible.
 * @module
 */
import { spawn } from 'node:child_process';
import { createMicroservices } from '../support/fixtures.ts';
import { convergeScript } from '../support/shipped-cli.ts';
import { round, summarize } from '../support/stats.ts';
import type { Cell, Scenario } from './types.ts';

const NAMESPACE = 'bench-cli';
const RUNS = 7;
/** The goal: first output within this many milliseconds of the start. */
export const CLI_FIRST_OUTPUT_GOAL_MS = 200;

interface Timing { firstOutputMs: number; exitMs: number }

function timeOnce(args: string[]): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first: number | undefined;
    let stderr = '';
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    child.stdout.on('data', () => { first ??= performance.now() - t0; });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('error', reject);
    child.on('close', (code) => {
      const exitMs = performance.now() - t0;
      if (code !== 0) reject(new Error(`${args.slice(1).join(' ')} exited ${code}: ${stderr.slice(-400)}`));
      else resolve({ firstOutputMs: first ?? exitMs, exitMs });
    });
  });
}

export const cliStart: Scenario = {
  name: 'cli-start',
  title: 'CLI start-up',
  description:
    `\`converge status\`, \`converge explain microservice/<name>\` and \`converge crds\` of the shipped build (compiled JavaScript, production dependencies), each run ${RUNS} times one after the other against a namespace holding one Microservice. Times run from the spawn of the process until its first byte on stdout, and until it exits. \`node -e\` printing one line is the floor (Node's own start-up). Goal: first output ≤ ${CLI_FIRST_OUTPUT_GOAL_MS} ms.`,
  async run(ctx) {
    const { session } = ctx;
    const script = await convergeScript(session.log);
    const ns = await session.createNamespace(NAMESPACE);
    const [name] = await createMicroservices(session.client, ns, 1);
    const kube = ['--kubeconfig', session.kubeconfigPath];
    const commands: [string, string[]][] = [
      ['node -e (floor)', ['-e', 'process.stdout.write("x\\n")']],
      ['converge status', [script, 'status', '-n', ns, ...kube]],
      ['converge explain', [script, 'explain', `microservice/${name!}`, '-n', ns, ...kube]],
      ['converge crds', [script, 'crds']],
    ];
    const rows: Cell[][] = [];
    const figures: Record<string, number | boolean | null> = {};
    let worst = 0;
    for (const [label, args] of commands) {
      await timeOnce(args); // warm the file cache
      const runs: Timing[] = [];
      for (let i = 0; i < RUNS; i++) runs.push(await timeOnce(args));
      const first = summarize(runs.map((r) => r.firstOutputMs));
      const exit = summarize(runs.map((r) => r.exitMs));
      rows.push([label, round(first.p50, 0), round(first.max, 0), round(exit.p50, 0)]);
      const key = label.startsWith('converge ') ? label.slice('converge '.length) : 'nodeFloor';
      figures[`${key}FirstOutputP50Ms`] = round(first.p50, 0);
      figures[`${key}FirstOutputMaxMs`] = round(first.max, 0);
      if (key !== 'nodeFloor') worst = Math.max(worst, first.p50 ?? Infinity);
    }
    figures.goalMet = worst <= CLI_FIRST_OUTPUT_GOAL_MS;
    session.log(`cli-start: ${rows.map((r) => `${r[0]} ${r[1]} ms`).join(', ')}`);
    return {
      headline: `first output p50: ${rows.slice(1).map((r) => `${String(r[0]).replace('converge ', '')} ${r[1]} ms`).join(', ')} (Node alone ${rows[0]![1]} ms; goal ≤ ${CLI_FIRST_OUTPUT_GOAL_MS} ms)`,
      figures,
      tables: [{ title: `CLI start-up, ${RUNS} runs each (shipped build)`, columns: ['command', 'first output p50 (ms)', 'first output max (ms)', 'exit p50 (ms)'], rows }],
      charts: [],
      notes: [],
    };
  },
};
