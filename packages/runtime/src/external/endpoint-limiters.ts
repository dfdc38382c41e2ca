/**
 * One `EndpointLimiter` per external endpoint, created on first use and shared by every caller
 * of that endpoint (so a hundred objects pointing at one vendor share one budget).
 *
 * @module
 */
import { EndpointLimiter, type EndpointLimiterOptions, type EndpointLimiterStats } from './endpoint-limiter.ts';

export interface EndpointLimiters {
  /** The limiter for `endpoint`; the same object for every URL with the same origin. */
  get(endpoint: string): EndpointLimiter;
  /** Stats per endpoint key, for metrics and tests. */
  stats(): Record<string, EndpointLimiterStats>;
}

export interface EndpointLimitersOptions extends EndpointLimiterOptions {
  /** Per-endpoint overrides, by the same key `keyOf` returns. */
  overrides?: Record<string, EndpointLimiterOptions>;
  /** Maps an endpoint to its key. Default: `endpointKey` (the URL origin). */
  keyOf?: (endpoint: string) => string;
}

/**
 * The key that identifies an endpoint: the lower-cased URL origin (`https://host:port`), so
 * paths and query strings share a budget. A string that is not a URL is its own key.
 */
export function endpointKey(endpoint: string): string {
  try {
    const origin = new URL(endpoint).origin;
    return origin === 'null' ? endpoint : origin.toLowerCase();
  } catch {
    return endpoint;
  }
}

/** Creates the registry; limiters are created lazily and never evicted. */
export function createEndpointLimiters(options: EndpointLimitersOptions = {}): EndpointLimiters {
  const { overrides = {}, keyOf = endpointKey, ...defaults } = options;
  const limiters = new Map<string, EndpointLimiter>();
  return {
    get(endpoint) {
      const key = keyOf(endpoint);
      let limiter = limiters.get(key);
      if (!limiter) {
        limiter = new EndpointLimiter({ ...defaults, ...overrides[key] });
        limiters.set(key, limiter);
      }
      return limiter;
    },
    stats() {
      return Object.fromEntries([...limiters].map(([key, limiter]) => [key, limiter.stats()]));
    },
  };
}
