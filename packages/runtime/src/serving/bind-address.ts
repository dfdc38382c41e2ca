/**
 * Bind addresses as controller-runtime spells them: `host:port`, `:port` (all interfaces),
 * `[::1]:port`, and `0` to disable the endpoint.
 * @module
 */

export interface BindAddress {
  /** `undefined` means all interfaces. */
  host: string | undefined;
  /** `0` asks the OS for a free port. */
  port: number;
}

/** Parses a bind address; `undefined` for `'0'` or `''` (disabled). Throws a RangeError when malformed. */
export function parseBindAddress(address: string): BindAddress | undefined {
  const a = address.trim();
  if (a === '' || a === '0') return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(a);
  if (!m) throw new RangeError(`bind address ${JSON.stringify(address)} is not host:port, :port, [ipv6]:port or 0`);
  const port = Number(m[3]);
  if (port > 65535) throw new RangeError(`bind address ${JSON.stringify(address)}: port out of range`);
  const host = m[1] ?? (m[2] || undefined);
  return { host, port };
}
