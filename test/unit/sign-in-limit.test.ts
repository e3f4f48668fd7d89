import { describe, expect, it } from 'vitest';
import { SignInLimiter } from '../../src/console/sign-in-limit.js';

describe('the failed sign-in limit', () => {
  it('refuses an address after 10 failures within a minute, until the oldest is a minute old', () => {
    let now = 1_000_000;
    const limiter = new SignInLimiter(10, () => now);
    for (let i = 0; i < 10; i++) {
      expect(limiter.retryAfterSeconds('a')).toBe(0);
      limiter.recordFailure('a');
      now += 1_000; // failures at 0 s, 1 s, … 9 s
    }
    // at 10 s: the oldest failure (0 s) leaves the window at 60 s
    expect(limiter.retryAfterSeconds('a')).toBe(50);
    expect(limiter.retryAfterSeconds('b')).toBe(0);
    now = 1_000_000 + 59_999;
    expect(limiter.retryAfterSeconds('a')).toBe(1);
    now = 1_000_000 + 60_000;
    expect(limiter.retryAfterSeconds('a')).toBe(0);
    // one more failure fills the window again (1 s … 9 s and 60 s): the 1 s one leaves at 61 s
    limiter.recordFailure('a');
    expect(limiter.retryAfterSeconds('a')).toBe(1);
  });
});
