/**
 * A first-in first-out list of keys with O(1) amortised push and shift (plain `Array#shift` is
 * O(n) on large arrays).
 *
 * @module
 */
export class KeyFifo {
  #items: string[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(key: string): void {
    this.#items.push(key);
  }

  shift(): string | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const key = this.#items[this.#head++];
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return key;
  }
}
