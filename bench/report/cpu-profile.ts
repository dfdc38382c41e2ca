/**
 * Summarizes a V8 CPU profile (`.cpuprofile`, as written by `node --cpu-prof`): self time per
 * function, top first, with idle and GC shown as V8 names them. Pure apart from `readProfile`;
 * open the file itself in Chrome DevTools (Performance → Load profile) for the call tree.
 * @module
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface HotFunction {
  name: string;
  /** file:line, relative to the repository when inside it. */
  location: string;
  selfMs: number;
  selfShare: number;
}

export function readProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
}

/** Self time per function (summed over call sites), the `limit` largest. */
export function hotFunctions(profile: CpuProfile, root: string, limit = 10): { totalMs: number; functions: HotFunction[] } {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, { name: string; location: string; us: number }>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    // timeDeltas[i] is the time since the previous sample: attribute it to this sample's node.
    const dt = Math.max(0, profile.timeDeltas[i] ?? 0);
    total += dt;
    const node = byNode.get(id);
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.startsWith('file://') ? relative(root, new URL(url).pathname) : url;
    const location = file ? `${file}:${lineNumber + 1}` : '';
    const name = functionName || '(anonymous)';
    const key = `${name}@${location}`;
    const entry = selfUs.get(key) ?? { name, location, us: 0 };
    entry.us += dt;
    selfUs.set(key, entry);
  });
  const functions = [...selfUs.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, limit)
    .map((e) => ({ name: e.name, location: e.location, selfMs: Math.round(e.us / 100) / 10, selfShare: total > 0 ? e.us / total : 0 }));
  return { totalMs: Math.round(total / 1000), functions };
}
