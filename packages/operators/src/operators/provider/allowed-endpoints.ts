/**
 * Which vendor endpoints a DigitalHumanProvider may name (`provider.vendor.allowedEndpoints` in
 * the operator configuration): the platform team's list of base URLs its tokens may be sent to.
 *
 * Guarantees:
 * - An empty list allows every endpoint (the default: the Secret's opt-in label is then the only
 *   gate, see `VENDOR_CREDENTIALS_LABEL`).
 * - An entry allows itself and every URL under it on a path boundary: `https://api.vendor.example`
 *   allows `https://api.vendor.example/v2`, never `https://api.vendor.example.evil.test` nor
 *   `https://api.vendor.example:8443`. Scheme and host compare as URLs do (case-insensitive host,
 *   default port dropped); paths compare exactly, with trailing slashes ignored.
 * - `endpointAllowed` is pure; entries are checked when the configuration is read
 *   (`allowedEndpointProblems`).
 * - What a person is told about a refused endpoint is `endpoint-not-allowed.ts` (apart, so that
 *   the configuration's check loads nothing of the provider operator in a Microservice-only process).
 * @module
 */

/** Why `entry` cannot be an allowed endpoint (empty when it can). */
export function allowedEndpointProblems(entries: readonly string[]): string[] {
  const problems: string[] = [];
  entries.forEach((entry, i) => {
    const url = parse(entry);
    if (!url) problems.push(`allowedEndpoints[${i}]: ${JSON.stringify(entry)} is not a URL`);
    else if (url.protocol !== 'https:') problems.push(`allowedEndpoints[${i}]: ${JSON.stringify(entry)} must use https`);
    else if (url.username || url.password || url.href.includes('?') || url.href.includes('#')) problems.push(`allowedEndpoints[${i}]: ${JSON.stringify(entry)} must be a base URL (no user info, query or fragment)`);
  });
  return problems;
}

/** Whether `endpoint` is allowed by `entries` (every endpoint when `entries` is empty). */
export function endpointAllowed(entries: readonly string[], endpoint: string): boolean {
  if (entries.length === 0) return true;
  const target = parse(endpoint);
  if (!target) return false;
  const path = trimSlashes(target.pathname);
  return entries.some((entry) => {
    const allowed = parse(entry);
    if (!allowed || allowed.origin !== target.origin) return false;
    const prefix = trimSlashes(allowed.pathname);
    return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
  });
}

function parse(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function trimSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}
