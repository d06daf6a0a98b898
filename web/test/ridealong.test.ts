import { describe, expect, it } from 'vitest';
import { frameBudget, resetFrameBudget, RideAlong } from '../src/hud/ridealong';

const tick = (): Promise<void> => new Promise((resolve) => { setTimeout(resolve, 0); });

describe('RideAlong', () => {
  it('runs a rider at the first change of the page after its earliest moment, once', async () => {
    const root = document.createElement('div');
    const p = document.createElement('p');
    p.textContent = 'one';
    p.setAttribute('class', 'a');
    root.append(p);
    let t = 0;
    const ride = new RideAlong(() => root, () => t);
    const went: string[] = [];
    ride.ride(100, () => went.push('late'));
    ride.ride(0, () => went.push('soon'));
    p.setAttribute('class', 'b');
    await tick();
    expect(went).toEqual(['soon']);
    t = 150;
    p.append('two');
    await tick();
    expect(went).toEqual(['soon', 'late']);
    p.append('three');
    await tick();
    expect(went).toEqual(['soon', 'late']);
    expect(ride.waiting).toBe(0);
  });

  it('is not moved by a write that changes nothing drawn: the same value again, aria-* or title', async () => {
    const root = document.createElement('div');
    const p = document.createElement('p');
    p.setAttribute('class', 'a');
    p.hidden = false;
    root.append(p);
    const text = document.createTextNode('same');
    p.append(text);
    const ride = new RideAlong(() => root, () => 0);
    const went: string[] = [];
    const cancel = ride.ride(0, () => went.push('went'));
    p.setAttribute('class', 'a');
    p.hidden = false;
    p.setAttribute('aria-label', 'x');
    p.title = 'y';
    text.nodeValue = 'same';
    await tick();
    expect(went).toEqual([]);
    cancel();
    p.setAttribute('class', 'b');
    await tick();
    expect(went).toEqual([]);
    ride.ride(0, () => went.push('went'));
    text.nodeValue = 'other';
    await tick();
    expect(went).toEqual(['went']);
  });

  it('keeps the page\'s frame budget unless its address says ?frames=all (the latency bench\'s A/B)', () => {
    const at = location.pathname + location.search;
    try {
      history.replaceState(null, '', '/w/abc/?frames=all');
      resetFrameBudget();
      expect(frameBudget()).toBe(false);
      history.replaceState(null, '', '/w/abc/');
      resetFrameBudget();
      expect(frameBudget()).toBe(true);
    } finally {
      history.replaceState(null, '', at);
      resetFrameBudget();
    }
  });
});
