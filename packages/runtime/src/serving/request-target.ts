/**
 * Reading an HTTP request target (RFC 9112 §3.2) as a URL, for every server the runtime and the
 * operators run (probes, metrics, webhooks, the dashboard).
 * @module
 */

/**
 * The request target as a URL, or `undefined` when it is none (`http://[/`). An origin-form
 * target (`/…`) is a path and a query: `//host/healthz` names the path `//host/healthz`, not
 * another host's `/healthz`, which a relative URL parse would read. An absolute-form target
 * (`https://host/convert`) is read as it is; only its path and query mean anything to a server.
 */
export function requestTargetUrl(target: string | undefined): URL | undefined {
  const t = target ?? '/';
  try {
    return t.startsWith('/') ? new URL(`http://localhost${t}`) : new URL(t, 'http://localhost');
  } catch {
    return undefined;
  }
}
