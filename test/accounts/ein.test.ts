import { describe, expect, it } from 'vitest';
import { formatEin, parseEin } from '../../src/accounts/ein.js';

describe('EIN', () => {
  it('accepts 12-3456789 and 123456789 and nothing else', () => {
    expect(parseEin('12-3456789')).toBe('123456789');
    expect(parseEin(' 123456789 ')).toBe('123456789');
    for (const bad of ['1-23456789', '12345678', '1234567890', '12_3456789', 'ab-cdefghi', '']) expect(parseEin(bad)).toBeUndefined();
  });

  it('formats dashed', () => {
    expect(formatEin('123456789')).toBe('12-3456789');
  });
});
