import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, tuneHeap } from '../../src/server/heap-tuning.js';

describe('heap tuning', () => {
  it('leaves an operator-given heap growing factor alone', () => {
    expect(tuneHeap(['--heap-growing-percent=20'], '')).toBe(false);
    expect(tuneHeap([], '--max-semi-space-size=32 --heap_growing_percent=20')).toBe(false);
  });

  it('sets the factor in a running process (V8 reads it at every collection)', () => {
    // A child process, so this test's own heap is left as it was; the flag is set at run
    // time exactly as main does, then read back through V8's own flag parsing.
    const script = `
      const { tuneHeap } = await import(${JSON.stringify(new URL('../../src/server/heap-tuning.ts', import.meta.url).href)});
      console.log(JSON.stringify({ set: tuneHeap([], '') }));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout.trim().split('\n').pop()!)).toEqual({ set: true });
    expect(HEAP_GROWING_PERCENT).toBe(50);
  });
});
