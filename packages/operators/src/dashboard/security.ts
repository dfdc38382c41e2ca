/**
 * What every dashboard response carries and what every request must show: security headers (a
 * strict Content-Security-Policy — everything the page needs is served by this process, so
 * nothing else is allowed), read-only methods, the Host check that stops DNS rebinding on a
 * loopback listen, and the bearer token when one is configured.
 *
 * The token is accepted as `Authorization: Bearer <token>` (API clients), as the cookie
 * `converge_dashboard_token` (the page, including its EventSource, which cannot send headers),
 * or once as `?token=` on the page URL, which sets that cookie (HttpOnly, SameSite=Strict) and
 * redirects to the same URL without it. Tokens are compared in constant time.
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

const digest = (s: string) => createHash('sha256').update(s).digest();

export function tokensEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === TOKEN_COOKIE) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

export type AccessDecision =
  | { ok: true }
  | { ok: false; status: 401 | 403 | 421; message: string }
  /** The token came in the URL: set the cookie and redirect to `location`. */
  | { ok: 'redirect'; location: string; cookie: string };

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
  if (token === undefined) return { ok: true };
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    return m && tokensEqual(m[1]!, token) ? { ok: true } : { ok: false, status: 401, message: 'invalid bearer token' };
  }
  const fromCookie = cookieToken(req);
  if (fromCookie !== undefined && tokensEqual(fromCookie, token)) return { ok: true };
  const fromQuery = url.searchParams.get('token');
  if (fromQuery !== null && !url.pathname.startsWith('/api/')) {
    if (!tokensEqual(fromQuery, token)) return { ok: false, status: 401, message: 'invalid token' };
    const clean = new URL(url);
    clean.searchParams.delete('token');
    return {
      ok: 'redirect',
      location: `${clean.pathname}${clean.search}${clean.hash}`,
      cookie: `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
    };
  }
  return { ok: false, status: 401, message: 'this dashboard needs a bearer token: send "Authorization: Bearer <token>", or open the page once with ?token=<token>' };
}
