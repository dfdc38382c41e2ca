/**
 * Server-sent events: one stream per `GET /api/v1/events`, fed by the model's change events.
 *
 * What a client can rely on: `retry: 1000`; each event has `id:` (a sequence number, per
 * stream), `event:` (the `ServerEvent` type) and `data:` (JSON); a comment every 15 s keeps
 * proxies from closing an idle stream. With `?snapshot=true` the first event is a `snapshot`
 * of everything (what the page uses: no gap between the snapshot and the changes, since both
 * come from the same synchronous model). A client that cannot keep up (more than 8 MiB waiting
 * beyond the snapshot it is reading) is disconnected, its connection destroyed and what waited
 * in it let go, rather than buffered without bound; it reconnects and gets a new snapshot.
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { ServerEvent } from './shared/types.ts';

const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const HEARTBEAT_MS = 15_000;

export class EventStream {
  readonly #res: ServerResponse;
  #seq = 0;
  #closed = false;
  #snapshotBytes = 0;
  readonly #heartbeat: NodeJS.Timeout;
  readonly #onClose: () => void;

  constructor(res: ServerResponse, onClose: () => void) {
    this.#res = res;
    this.#onClose = onClose;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.socket?.setNoDelay(true);
    res.write('retry: 1000\n\n');
    this.#heartbeat = setInterval(() => this.#write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.#heartbeat.unref();
    res.on('close', () => this.close());
  }

  send(event: ServerEvent): void {
    this.#seq += 1;
    const text = `id: ${this.#seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
    // A client may be behind by a whole snapshot (it is reading the one it asked for) and 8 MiB
    // of changes on top; further behind, a new snapshot would serve it better.
    if (event.type === 'snapshot') this.#snapshotBytes = Math.max(this.#snapshotBytes, Buffer.byteLength(text));
    this.#write(text);
  }

  #write(text: string): void {
    if (this.#closed) return;
    if (this.#res.writableLength > MAX_BUFFERED_BYTES + this.#snapshotBytes) {
      this.close();
      // Ending would keep what waits until the client reads it, which it does not: cut it.
      this.#res.destroy();
      return;
    }
    this.#res.write(text);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#onClose();
    this.#res.end();
  }
}
