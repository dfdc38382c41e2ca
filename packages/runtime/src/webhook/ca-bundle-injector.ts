/**
 * Keeps CRDs trusting the webhook's CA, as cert-manager's cainjector does for its path: writes the
 * CA (and, for local runs, the URL) into each CRD's conversion block with `injectCaBundle`, then
 * looks again every `recheckMs` and writes it back when someone changed the block (a `kubectl
 * replace` or `kubectl edit` of the CRD, a GitOps tool replacing it, a CA the webhook moved to).
 * A manager runnable for every replica (leader or not): the replicas share one CA, so they agree.
 *
 * Guarantees: a CRD that already trusts the CA costs one GET per CRD per recheck and no write; a
 * failure is retried with backoff (0.5 s doubling, capped at 30 s) and logged, never fatal;
 * `start(signal)` settles when the signal aborts. `injected()` turns true at the first success and
 * stays true (a readiness check: a later failure to write does not take serving replicas out of
 * their Service; it is logged at warn with the error).
 * Caveat: a change is repaired within `recheckMs` (default 30 s), not at once; conversions fail
 * meanwhile if the change removed the CA.
 * @module
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';
import type { KubeClient } from '../client/index.ts';
import { injectCaBundle } from './ca-bundle.ts';

export interface CaBundleInjectorOptions {
  client: KubeClient;
  /** CRD names, e.g. `microservices.platform.example.io`. */
  crds: readonly string[];
  /** The CA (PEM) to inject now: the webhook server's; undefined while it has none. */
  caPem: () => string | undefined;
  /** The webhook's URL (local runs); without it each CRD's own `service` is kept. */
  url?: string;
  /** How long after a success the CRDs are looked at again (default 30 000 ms). */
  recheckMs?: number;
  clock?: Clock;
  log?: Logger;
}

export class CaBundleInjector {
  readonly #o: CaBundleInjectorOptions;
  #injected = false;
  #lastError: string | undefined;

  constructor(options: CaBundleInjectorOptions) {
    this.#o = options;
  }

  /** Whether the CRDs have trusted the CA at least once since the start. */
  injected(): boolean {
    return this.#injected;
  }

  /** Why the last attempt failed, if it did. */
  lastError(): string | undefined {
    return this.#lastError;
  }

  async start(signal: AbortSignal): Promise<void> {
    const { client, crds, url, log } = this.#o;
    const clock = this.#o.clock ?? systemClock;
    const recheckMs = this.#o.recheckMs ?? 30_000;
    for (let failures = 0; !signal.aborted; ) {
      let waitMs: number;
      try {
        const caPem = this.#o.caPem();
        if (!caPem) throw new Error('the webhook has no CA to inject');
        const written = await injectCaBundle(client, { crds, caPem, ...(url ? { url } : {}), signal });
        if (!this.#injected) log?.info({ crds, written, url }, written.length ? 'webhook CA written into the CRDs' : 'the CRDs already trust the webhook CA');
        else if (written.length) log?.warn({ crds: written }, "a CRD's conversion block had changed; the webhook CA was written into it again");
        this.#injected = true;
        this.#lastError = undefined;
        failures = 0;
        waitMs = recheckMs;
      } catch (err) {
        if (signal.aborted) break;
        this.#lastError = err instanceof Error ? err.message : String(err);
        waitMs = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
        failures += 1;
        log?.warn({ err: this.#lastError, retryInMs: waitMs }, 'cannot write the webhook CA into the CRDs');
      }
      await clock.sleep(waitMs, signal).catch(() => undefined);
    }
  }
}
