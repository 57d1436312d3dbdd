/**
 * Debounces the writes of an informational `last_used_at` (not a rate limit: nothing is
 * refused, a use is only not written again so soon): at most once per interval per id in
 * this process. The memory is bounded: past `maxIds` it starts over (a few extra writes).
 * Usage bookkeeping in memory, not data access: it lives beside the audit trail, not in db/.
 */
export class UseDebounce {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly intervalMs = 60_000,
    private readonly maxIds = 10_000,
  ) {}

  /** True when the use of `id` should be written now (and remembers that it was). */
  due(id: string): boolean {
    const now = Date.now();
    if ((this.last.get(id) ?? 0) > now - this.intervalMs) return false;
    if (this.last.size > this.maxIds) this.last.clear();
    this.last.set(id, now);
    return true;
  }
}
