import { describe, expect, it } from 'vitest';
import { MIN_OUTLINE_PX, visibleOutlines } from '../src/scene/renderer';
import { depthOf } from '../src/scene/lod';

describe('visibleOutlines', () => {
  it('counts the outlines (largest first) at least the given size', () => {
    const sizes = new Float32Array([40, 20, 20, 10, 5, 5, 1]);
    expect(visibleOutlines(sizes, 0)).toBe(7);
    expect(visibleOutlines(sizes, 1)).toBe(7);
    expect(visibleOutlines(sizes, 5)).toBe(6);
    expect(visibleOutlines(sizes, 6)).toBe(4);
    expect(visibleOutlines(sizes, 20)).toBe(3);
    expect(visibleOutlines(sizes, 41)).toBe(0);
    expect(visibleOutlines(new Float32Array(0), 3)).toBe(0);
  });

  it('agrees with a scan on every threshold', () => {
    const sizes = Float32Array.from({ length: 200 }, (_, i) => Math.floor((200 - i) / 3));
    for (let min = 0; min <= 70; min += 0.5) {
      expect(visibleOutlines(sizes, min)).toBe(sizes.filter((s) => s >= min).length);
    }
  });

  it('leaves out a folder under MIN_OUTLINE_PX on screen at the zoom', () => {
    // A 10-cell folder is 2.5 px at zoom 0.25 (left out) and 5 px at 0.5 (drawn).
    const sizes = new Float32Array([100, 10]);
    expect(visibleOutlines(sizes, MIN_OUTLINE_PX / 0.25)).toBe(1);
    expect(visibleOutlines(sizes, MIN_OUTLINE_PX / 0.5)).toBe(2);
  });
});

describe('depthOf', () => {
  it('counts the root as 0 and one per path segment', () => {
    expect(depthOf('')).toBe(0);
    expect(depthOf('src')).toBe(1);
    expect(depthOf('src/a')).toBe(2);
    expect(depthOf('a/b/c/d')).toBe(4);
  });
});
