import { describe, expect, it } from 'vitest';
import { LruMap } from '../../src/oidc/lru-map.js';

describe('LruMap', () => {
  it('evicts the least recently used entry when full, and only that one', () => {
    const map = new LruMap<string, number>(3);
    map.set('a', 1).set('b', 2).set('c', 3);
    // Reading a makes b the least recently used.
    expect(map.get('a')).toBe(1);
    map.set('d', 4);
    expect(map.size).toBe(3);
    expect(map.get('b')).toBeUndefined();
    expect([map.get('a'), map.get('c'), map.get('d')]).toEqual([1, 3, 4]);
  });

  it('counts an overwrite as a use and never grows past its size', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 10);
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(10);
    for (let i = 0; i < 100; i += 1) map.set(`k${i}`, i);
    expect(map.size).toBe(2);
    expect([map.get('k98'), map.get('k99')]).toEqual([98, 99]);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new LruMap(0)).toThrow(/positive size/);
    expect(() => new LruMap(1.5)).toThrow(/positive size/);
  });
});
