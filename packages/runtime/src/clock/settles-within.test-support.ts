/**
 * For tests: `p`, or a rejection naming `what` once `ms` of real time passed without it settling
 * (the timer is cleared either way). One helper for the tests that bound a stop or a start.
 */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}
