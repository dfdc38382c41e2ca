/**
 * Where the dashboard listens and whether that needs a token: `--listen host:port` parsed, and
 * the rule that only a loopback address may go without `--token-file`. Pure, apart from reading
 * the token file.
 *
 * Loopback: `127.0.0.0/8`, `::1`, `localhost`. Anything else (`0.0.0.0`, `:7070` = every
 * interface, a LAN address, a host name) is reachable from other machines and needs a token.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';

export const DEFAULT_LISTEN = '127.0.0.1:7070';

export interface ListenAddress {
  /** Host to bind ('' = every interface). */
  host: string;
  port: number;
  loopback: boolean;
}

export class ListenError extends Error {
  override readonly name = 'ListenError';
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped ? mapped[1]!.startsWith('127.') : false;
}

/** Parses `host:port`, `[v6]:port` or `:port`; the port may be 0 (any free port). */
export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  if (!m) throw new ListenError(`--listen must be host:port (e.g. ${DEFAULT_LISTEN}, [::1]:7070, 0.0.0.0:7070), got ${JSON.stringify(text)}`);
  const host = m[1] ?? m[2] ?? '';
  const port = Number(m[3]);
  if (port > 65535) throw new ListenError(`--listen: port ${port} is out of range`);
  if (m[1] !== undefined && isIP(host) !== 6) throw new ListenError(`--listen: ${JSON.stringify(host)} is not an IPv6 address`);
  return { host, port, loopback: host !== '' && isLoopbackHost(host) };
}

/**
 * The bearer token for a listen address: required (and read from `tokenFile`) for a
 * non-loopback address; optional on loopback. Throws `ListenError` with the reason otherwise.
 */
export async function tokenFor(address: ListenAddress, tokenFile: string | undefined): Promise<string | undefined> {
  if (!tokenFile) {
    if (address.loopback) return undefined;
    throw new ListenError(
      `refusing to listen on ${address.host || '*'}:${address.port} without --token-file: the dashboard would be open to other machines. ` +
        'Give --token-file <file> (a bearer token, one line), or listen on a loopback address such as 127.0.0.1.',
    );
  }
  let token: string;
  try {
    token = (await readFile(tokenFile, 'utf8')).trim();
  } catch (err) {
    throw new ListenError(`cannot read --token-file ${tokenFile}: ${(err as Error).message}`);
  }
  if (token.length < 16) throw new ListenError(`the token in ${tokenFile} is too short (${token.length} characters; use at least 16, e.g. \`openssl rand -hex 32\`)`);
  if (/\s/.test(token)) throw new ListenError(`the token in ${tokenFile} must be one line without spaces`);
  return token;
}
