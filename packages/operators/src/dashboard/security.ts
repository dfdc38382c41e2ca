/**
 * What every dashboard response carries and what every request must show: security headers (a
 * strict Content-Security-Policy — everything the page needs is served by this process, so
 * nothing else is allowed), read-only methods, the Host check that stops DNS rebinding on a
 * loopback listen, and the bearer token when one is configured (on every path but `/healthz`).
 *
 * The token is accepted as `Authorization: Bearer <token>` (API clients), as the cookie
 * `converge_dashboard_token` (the page, including its EventSource, which cannot send headers),
 * or once as `?token=` on the page URL, which sets that cookie (HttpOnly, SameSite=Strict) and
 * redirects to the same URL without it (always on this origin). Tokens are compared in constant
 * time; a header's token may come as UTF-8 or latin1, a cookie's is percent-encoded (one that
 * does not decode is no token).
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLoopbackHost } from './listen.ts';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

export const TOKEN_COOKIE = 'converge_dashboard_token';

export function applySecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
}

// Over the UTF-16 code units: UTF-8 would turn every lone surrogate into the same U+FFFD, and
// two different strings would compare equal.
const digest = (s: string) => createHash('sha256').update(Buffer.from(s, 'utf16le')).digest();

/** String equality in constant time (whatever the lengths: both sides are hashed first). */
export function tokensEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether a header's token is `expected`. Header values are bytes (Node hands them over as
 * latin1): a token with non-ASCII characters comes as UTF-8 from curl, as latin1 from fetch
 * (which cannot send characters beyond U+00FF at all). Both readings are compared, always both.
 */
function headerTokenEquals(value: string, expected: string): boolean {
  let asUtf8: string | undefined;
  try {
    asUtf8 = utf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    // not UTF-8: latin1 only
  }
  const latin1 = tokensEqual(value, expected);
  const fromUtf8 = tokensEqual(asUtf8 ?? value, expected);
  return latin1 || fromUtf8;
}

/** The token cookie's value; undefined when absent or not valid percent-encoding (then it is no token). */
function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === TOKEN_COOKIE) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export type AccessDecision =
  | { ok: true }
  | { ok: false; status: 401 | 403 | 421; message: string }
  /** A token came in the URL: redirect to `location` (without it), setting `cookie` when given. */
  | { ok: 'redirect'; location: string; cookie?: string };

/**
 * Decides whether a request may be served. `loopbackListen`: the server listens on loopback
 * only, so the Host header must name a loopback host (a page on another site that resolves its
 * own name to 127.0.0.1 sends its own name and is refused).
 */
export function checkAccess(req: IncomingMessage, url: URL, options: { token: string | undefined; loopbackListen: boolean }): AccessDecision {
  if (options.loopbackListen) {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (!isLoopbackHost(host)) return { ok: false, status: 421, message: `this dashboard listens on loopback only and answers to localhost/127.0.0.1, not to Host ${JSON.stringify(req.headers.host ?? '')}` };
  }
  const token = options.token;
  // Liveness says nothing a caller could use, and a probe should not need the secret.
  if (token === undefined || url.pathname === '/healthz') return { ok: true };
  // The header or the cookie lets a request in, whichever holds the token: behind a proxy that
  // authenticates people itself, the browser (Basic auth) or the proxy (its own bearer) sends an
  // Authorization header that is not this dashboard's, and the cookie must still count.
  const auth = req.headers.authorization;
  const bearer = auth === undefined ? undefined : /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
  if (bearer !== undefined && headerTokenEquals(bearer, token)) return { ok: true };
  const fromCookie = cookieToken(req);
  const cookieValid = fromCookie !== undefined && tokensEqual(fromCookie, token);
  const fromQuery = url.searchParams.get('token');
  if (fromQuery !== null && !url.pathname.startsWith('/api/')) {
    // A token in the address is always taken out of it (history, bookmarks, screen shares), also
    // when the cookie already lets the request in (a bookmarked login link).
    const queryValid = tokensEqual(fromQuery, token);
    if (!queryValid && !cookieValid) return { ok: false, status: 401, message: 'invalid token' };
    const clean = new URL(url);
    clean.searchParams.delete('token');
    return {
      ok: 'redirect',
      // A path that starts with // (from a target like `/.//evil.example`) would be read by the
      // browser as another host: the location always stays on this origin.
      location: `${clean.pathname.replace(/^\/+/, '/')}${clean.search}${clean.hash}`,
      ...(queryValid ? { cookie: `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/${cameOverTls(req) ? '; Secure' : ''}` } : {}),
    };
  }
  if (cookieValid) return { ok: true };
  if (bearer !== undefined) return { ok: false, status: 401, message: 'invalid bearer token' };
  return { ok: false, status: 401, message: 'this dashboard needs a bearer token: send "Authorization: Bearer <token>", or open the page once with ?token=<token>' };
}

/**
 * Whether the browser reached this dashboard over TLS: through a proxy that says so
 * (`X-Forwarded-Proto: https`; the dashboard serves plain HTTP itself). The cookie is then
 * `Secure`. A client that claims it falsely over plain HTTP only gets a cookie its browser drops.
 */
function cameOverTls(req: IncomingMessage): boolean {
  const proto = req.headers['x-forwarded-proto'];
  return (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase() === 'https';
}
