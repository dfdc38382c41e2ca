/**
 * Test support: what keeps this process's event loop alive (Node's active resources: servers,
 * sockets, timers), counted by type, to see that something stopped left none of its own behind.
 * Caveat: resources that are `unref()`'d are not counted (a peer's end of such a connection is).
 * @module
 */

/** Node's active resources now, counted by type. */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/** What `now` holds beyond `before`, by type (empty when nothing was added). */
export function beyond(before: Map<string, number>, now: Map<string, number>): Record<string, number> {
  const extra: Record<string, number> = {};
  for (const [type, n] of now) if (n > (before.get(type) ?? 0)) extra[type] = n - (before.get(type) ?? 0);
  return extra;
}

/**
 * What is still beyond `before` once it has had `withinMs` to go (checked every 25 ms; empty as
 * soon as nothing is). A socket's peer closes a moment after its owner did, more so on a loaded
 * machine; what something left open for good (a keep-alive pool lasts seconds) is still there.
 */
export async function leftBeyond(before: Map<string, number>, withinMs = 2_000): Promise<Record<string, number>> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const extra = beyond(before, activeResources());
    if (Object.keys(extra).length === 0 || performance.now() >= deadline) return extra;
    await new Promise((r) => setTimeout(r, 25));
  }
}
