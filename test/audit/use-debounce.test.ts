import { afterEach, describe, expect, it, vi } from 'vitest';
import { UseDebounce } from '../../src/audit/use-debounce.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('UseDebounce', () => {
  it('lets a use of an id through once per interval, each id on its own', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const debounce = new UseDebounce(60_000);
    expect(debounce.due('a')).toBe(true);
    expect(debounce.due('a')).toBe(false);
    expect(debounce.due('b')).toBe(true);
    vi.advanceTimersByTime(59_999);
    expect(debounce.due('a')).toBe(false);
    vi.advanceTimersByTime(2);
    expect(debounce.due('a')).toBe(true);
  });

  it('forgets everything past its size bound instead of growing', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const debounce = new UseDebounce(60_000, 2);
    for (const id of ['a', 'b', 'c']) expect(debounce.due(id)).toBe(true);
    expect(debounce.due('a')).toBe(false);
    // A fourth id finds three remembered (over the bound of 2): the memory starts over.
    expect(debounce.due('d')).toBe(true);
    expect(debounce.due('a')).toBe(true);
  });
});
