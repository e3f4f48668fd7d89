import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sweepProgress } from '../../src/cli/sweep-progress.js';

/** `tally grants expire`'s progress on a stream that is not a terminal (logs, a scheduler). */
function stream() {
  const lines: string[] = [];
  return { lines, stream: { isTTY: false, write: (text: string) => lines.push(text) } as unknown as NodeJS.WriteStream };
}

describe('sweepProgress', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('says nothing for a run over within a second', () => {
    const out = stream();
    const progress = sweepProgress('sweep', 3, out.stream);
    progress.tick();
    vi.advanceTimersByTime(900);
    progress.stop();
    expect(out.lines).toEqual([]);
  });

  it('past a second, a line every few seconds with the grants done of those due, and one at the end', () => {
    const out = stream();
    const progress = sweepProgress('sweep', 2500, out.stream);
    for (let i = 0; i < 1200; i++) progress.tick();
    vi.advanceTimersByTime(3500);
    expect(out.lines).toEqual(['sweep: 1,200/2,500; 3.0 s so far\n']);
    vi.advanceTimersByTime(1000);
    expect(out.lines).toHaveLength(1);
    progress.tick();
    progress.stop();
    expect(out.lines[1]).toBe('sweep: 1,201/2,500 in 4.5 s\n');
  });
});
