/**
 * Describes the machine and the code a benchmark ran on: CPU, memory, load, Node.js and
 * Kubernetes versions, git commit. Every report carries this so figures can be compared honestly.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, platform, release, totalmem, arch } from 'node:os';
import type { KubeClient } from '@converge/runtime';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  freeMemoryGiB: number;
  /** 1, 5 and 15 minute load averages when the run started (other work on the machine shows here). */
  loadAverageAtStart: number[];
  os: string;
  node: string;
  kubernetes: string;
  git: { commit: string; dirty: boolean; branch: string };
}

function git(args: string[], cwd: string): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

export async function describeMachine(client: KubeClient, repoRoot: string): Promise<MachineInfo> {
  let kubernetes = 'unknown';
  try {
    const v = await client.request<{ gitVersion?: string }>('GET', '/version');
    kubernetes = v.gitVersion ?? 'unknown';
  } catch {
    // reported as unknown
  }
  const status = git(['status', '--porcelain', '--untracked-files=no'], repoRoot);
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
    kubernetes,
    git: { commit: git(['rev-parse', 'HEAD'], repoRoot), dirty: status !== '' && status !== 'unknown', branch: git(['rev-parse', '--abbrev-ref', 'HEAD'], repoRoot) },
  };
}
