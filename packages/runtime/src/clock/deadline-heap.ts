/**
 * A binary min-heap of entries ordered by deadline (`at`), ties broken by `seq` (insertion
 * order). Shared by `FakeClock` (its timers) and the work queue (its delayed adds) so both
 * fire "earliest deadline first, FIFO among equal deadlines".
 *
 * @module
 */

/** Anything with a deadline and a tie-breaking sequence number. */
export interface DeadlineEntry {
  readonly at: number;
  readonly seq: number;
}

function before(a: DeadlineEntry, b: DeadlineEntry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Min-heap by (`at`, `seq`). push/pop O(log n), peek O(1). Entries are never mutated. */
export class DeadlineHeap<T extends DeadlineEntry> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(entry: T): void {
    const items = this.#items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent]!;
      if (!before(entry, p)) break;
      items[i] = p;
      i = parent;
    }
    items[i] = entry;
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    const n = items.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && before(items[r]!, items[l]!) ? r : l;
      const c = items[child]!;
      if (!before(c, last)) break;
      items[i] = c;
      i = child;
    }
    items[i] = last;
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }
}
