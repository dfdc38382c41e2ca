/**
 * Test-only fault injection at named points of an operator's work, so crash tests can kill the
 * process exactly between two steps (after a vendor create and before the status write, say).
 *
 * Off unless `CONVERGE_FAULTS` is set: `point=action[@n][,point=action[@n]…]`, where `action`
 * is `kill` (SIGKILL this process: no cleanup, as a node failure) or `throw` (an ordinary error),
 * and `n` (default 1) says on which hit of that point to act. Point names are documented by the
 * operators that call them (e.g. `microservice:after-apply-deployment`).
 * Contract: when off, a fault point costs one Map lookup and does nothing.
 * @module
 */

export type FaultPoint = (name: string) => void;

export function parseFaultSpec(spec: string): Map<string, { action: 'kill' | 'throw'; at: number }> {
  const out = new Map<string, { action: 'kill' | 'throw'; at: number }>();
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([\w:.-]+)=(kill|throw)(?:@(\d+))?$/.exec(part);
    if (!m) throw new Error(`bad CONVERGE_FAULTS entry ${JSON.stringify(part)}: want point=kill|throw[@n]`);
    out.set(m[1]!, { action: m[2] as 'kill' | 'throw', at: Number(m[3] ?? 1) });
  }
  return out;
}

/** The fault point function for this process (a no-op when `CONVERGE_FAULTS` is unset). */
export function faultPointsFromEnv(env: NodeJS.ProcessEnv = process.env): FaultPoint {
  const spec = env.CONVERGE_FAULTS;
  if (!spec) return () => {};
  const faults = parseFaultSpec(spec);
  const hits = new Map<string, number>();
  return (name) => {
    const fault = faults.get(name);
    if (!fault) return;
    const n = (hits.get(name) ?? 0) + 1;
    hits.set(name, n);
    if (n !== fault.at) return;
    if (fault.action === 'kill') {
      process.stderr.write(`fault point ${name}: SIGKILL\n`);
      process.kill(process.pid, 'SIGKILL');
    }
    throw new Error(`fault injected at ${name}`);
  };
}
