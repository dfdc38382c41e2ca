/**
 * `within(promise, ms, fallback)`: the promise's value, or `fallback` once `ms` passed. The timer
 * is cleared either way, so a bound that was not needed never keeps a test's process alive after
 * its tests (a two-minute bound left pending kept one alive for two minutes:
 * test/support/exit-watchdog.ts found it).
 * @module
 */
export async function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<F>((resolve) => { timer = setTimeout(() => resolve(fallback), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}
