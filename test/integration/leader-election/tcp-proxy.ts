/**
 * A TCP pass-through to the real API server that a test can cut: a network partition between
 * one replica and the control plane, with nothing faked above TCP.
 * @module
 */
import { createServer, connect, type Socket, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** `https://127.0.0.1:<port>`: use it as the kubeconfig server. */
  readonly url: string;
  /** From now on, existing connections are cut and new ones are accepted but never answered. */
  partition(): void;
  /** Forward again. */
  heal(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (cut) return; // a black hole: the TLS handshake never completes
    const upstream = connect({ host: hostname, port: Number(port) });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: local } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${local}`,
    partition() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    heal() {
      cut = false;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
