/**
 * Test support: reading a running dashboard as a client would — JSON GETs and the SSE stream
 * (parsed into `ServerEvent`s, with a way to wait for one that matches).
 * @module
 */
import type { ServerEvent } from '../../packages/operators/src/dashboard/index.ts';

export async function getJson<T = any>(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(new URL(path, base), { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

export interface EventReader {
  /** Every event received so far. */
  readonly events: ServerEvent[];
  /** Resolves with the first event (already received or to come) that matches. */
  next(match: (e: ServerEvent) => boolean, timeoutMs?: number): Promise<ServerEvent>;
  close(): void;
}

export async function openEvents(base: string, query = 'snapshot=true', headers: Record<string, string> = {}): Promise<EventReader> {
  const abort = new AbortController();
  const res = await fetch(new URL(`/api/v1/events?${query}`, base), { headers, signal: abort.signal });
  if (res.status !== 200 || !res.body) throw new Error(`GET /api/v1/events: ${res.status}`);
  const events: ServerEvent[] = [];
  const waiters = new Set<() => void>();
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let i;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
          if (data) {
            events.push(JSON.parse(data) as ServerEvent);
            for (const w of waiters) w();
          }
        }
      }
    } catch {
      // closed
    }
  })();
  return {
    events,
    next(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event within ${timeoutMs} ms (${events.length} received)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };
}
