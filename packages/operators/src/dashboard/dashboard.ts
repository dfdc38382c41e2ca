/**
 * A running dashboard: one `ClusterSource` per cluster feeding one `DashboardModel`, served by
 * one HTTP server. `converge dashboard` and `converge dev` both start it through here.
 *
 * What a caller can rely on: `startDashboard` resolves once the server listens (clusters may
 * still be connecting: the page shows them so); it refuses a non-loopback listen without a token
 * (`ListenError`); `close()` stops the server, closes open streams and stops every watch.
 * @module
 */
import type { Server } from 'node:http';
import type { Logger } from '@converge/runtime';
import { loadDashboardAssets } from './assets.ts';
import { ClusterSource } from './cluster-source.ts';
import type { ClusterSpec } from './cluster-source.ts';
import { createDashboardServer, listen } from './http-server.ts';
import { parseListen, tokenFor } from './listen.ts';
import { DashboardModel } from './model.ts';

export interface DashboardOptions {
  clusters: readonly ClusterSpec[];
  /** `host:port` (default `127.0.0.1:7070`; port 0 picks a free one). */
  listen?: string;
  /** File with the bearer token; required for a non-loopback listen. */
  tokenFile?: string;
  log?: Logger;
  /** How often the watches' health is judged (default 200 ms). */
  healthIntervalMs?: number;
}

export interface RunningDashboard {
  /** `http://host:port/` as a browser on this machine reaches it. */
  readonly url: string;
  readonly port: number;
  readonly model: DashboardModel;
  readonly sources: readonly ClusterSource[];
  close(): Promise<void>;
}

export async function startDashboard(options: DashboardOptions): Promise<RunningDashboard> {
  const names = new Set<string>();
  for (const c of options.clusters) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(c.name)) throw new Error(`cluster name ${JSON.stringify(c.name)} must be 1-63 letters, digits, '.', '_' or '-'`);
    if (names.has(c.name)) throw new Error(`two clusters are named ${JSON.stringify(c.name)}; name them with NAME=PATH`);
    names.add(c.name);
  }
  if (options.clusters.length === 0) throw new Error('no cluster to show');
  const address = parseListen(options.listen ?? '127.0.0.1:7070');
  const token = await tokenFor(address, options.tokenFile);
  const assets = await loadDashboardAssets();

  const model = new DashboardModel();
  const sources = options.clusters.map((c) => new ClusterSource(c, model, {
    ...(options.log ? { log: options.log } : {}),
    ...(options.healthIntervalMs ? { healthIntervalMs: options.healthIntervalMs } : {}),
  }));
  const server: Server = createDashboardServer({ model, sources, assets, token, loopbackListen: address.loopback });
  const bound = await listen(server, address.host, address.port);
  const abort = new AbortController();
  const running = sources.map((s) => s.start(abort.signal));

  const shownHost = address.host === '' || address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host.includes(':') ? `[${address.host}]` : address.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${bound.port}/`,
    port: bound.port,
    model,
    sources,
    close: () => {
      closing ??= (async () => {
        abort.abort();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await Promise.all(running);
      })();
      return closing;
    },
  };
}
