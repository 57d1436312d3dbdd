/**
 * A Map bounded to `max` entries that evicts the least recently used one: reads and writes
 * move an entry to the young end (a Map iterates in insertion order, so re-inserting is the
 * move). For per-process records an attacker can add to at will (one per address it uses):
 * a flood costs it its own oldest records, never everyone's.
 */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`LruMap needs a positive size, not ${max}`);
  }

  get(key: K): V | undefined {
    if (!this.map.has(key)) return undefined;
    const value = this.map.get(key) as V;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key: K, value: V): this {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
