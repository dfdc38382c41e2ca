/**
 * Free TCP ports on 127.0.0.1 for components that bind them later (etcd, kube-apiserver, an
 * operator's metrics, probe and webhook servers).
 *
 * Guarantees: the ports are distinct, were free when chosen, and lie **below the kernel's
 * ephemeral range** where the kernel tells it (Linux: `/proc/sys/net/ipv4/ip_local_port_range`).
 * A port from `listen(0)` is an ephemeral port, which the kernel hands out again as the local
 * port of any outgoing connection: between choosing it and the component binding it (a second or
 * more for kube-apiserver, 15 s and more across an API server restart on the same port), a busy
 * machine's own connections could take it ("bind: address already in use"). Below the range, only
 * an explicit bind can take a port.
 *
 * A port handed out is not chosen again by this process for 10 minutes (its component may not
 * have bound it yet).
 *
 * Caveat: a port is still only free when chosen; two processes choosing at the same moment could
 * choose alike (random choice over some 20,000 ports makes that rare, not impossible).
 * @module
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';

/** How far below the ephemeral range ports are chosen from (never below 1024). */
const SPAN = 20_000;

/** The kernel's ephemeral port range, when it says (Linux); undefined elsewhere. */
export function ephemeralPortRange(read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')): { low: number; high: number } | undefined {
  try {
    const [low, high] = read().trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && Number.isInteger(high) && low! > 0 && low! <= high! ? { low: low!, high: high! } : undefined;
  } catch {
    return undefined;
  }
}

/** Picks n distinct free TCP ports on 127.0.0.1 (held open together, then released). */
export async function freePorts(n: number): Promise<number[]> {
  const range = ephemeralPortRange();
  const servers: Server[] = [];
  try {
    if (range && range.low > 1024 + 100) {
      const from = Math.max(1024, range.low - SPAN);
      const width = range.low - from;
      // A random start, then the ports after it: random across processes, and a run of taken
      // or recently given ports is stepped over rather than drawn again.
      let port = from + Math.floor(Math.random() * width);
      for (let tries = 0; servers.length < n; tries++, port = from + ((port - from + 1) % width)) {
        if (tries > 200 + 20 * n) throw new Error(`no ${n} free ports found below the ephemeral range (${from}–${range.low - 1})`);
        if (recentlyGiven(port) || servers.some((s) => (s.address() as AddressInfo).port === port)) continue;
        const held = await hold(port).catch(() => undefined);
        if (held) servers.push(held);
      }
    } else {
      for (let i = 0; i < n; i++) servers.push(await hold(0));
    }
    const ports = servers.map((s) => (s.address() as AddressInfo).port);
    for (const p of ports) given.set(p, performance.now());
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/**
 * Ports this process handed out, and when (monotonic ms): the component a port is for may bind it
 * seconds later, so a later call does not choose it again for a while.
 */
const given = new Map<number, number>();
const GIVEN_FOR_MS = 10 * 60_000;

function recentlyGiven(port: number): boolean {
  const at = given.get(port);
  if (at === undefined) return false;
  if (performance.now() - at < GIVEN_FOR_MS) return true;
  given.delete(port);
  return false;
}

function hold(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(s));
  });
}
