import { afterEach, describe, expect, it, vi } from 'vitest';
import { UseThrottle } from '../../src/audit/use-throttle.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('UseThrottle', () => {
  it('lets a use of an id through once per interval, each id on its own', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const throttle = new UseThrottle(60_000);
    expect(throttle.due('a')).toBe(true);
    expect(throttle.due('a')).toBe(false);
    expect(throttle.due('b')).toBe(true);
    vi.advanceTimersByTime(59_999);
    expect(throttle.due('a')).toBe(false);
    vi.advanceTimersByTime(2);
    expect(throttle.due('a')).toBe(true);
  });

  it('forgets everything past its size bound instead of growing', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const throttle = new UseThrottle(60_000, 2);
    for (const id of ['a', 'b', 'c']) expect(throttle.due(id)).toBe(true);
    expect(throttle.due('a')).toBe(false);
    // A fourth id finds three remembered (over the bound of 2): the memory starts over.
    expect(throttle.due('d')).toBe(true);
    expect(throttle.due('a')).toBe(true);
  });
});
