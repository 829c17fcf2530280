import { describe, expect, it } from 'vitest';
import { stallDetailText, stallOf, stallText, type Stall } from '../../src/stall';

// A reference run whose rank 1 was stopped after step 17: 10 x its 0.4 s steps, above the floor.
const stall: Stall = {
  phase: 'steps', last_step: 17, silence_seconds: 4.6, bound_seconds: 4.1, floor_seconds: 3,
  basis: 'steady_step_time', steady_step_seconds: 0.41, steady_steps: 14, history_seconds: null,
  history_attempts: 0, derivation: '10 x steady step 0.4 s (14 steps)', on_stall: 'restart',
};

describe('stall badge text', () => {
  it('says how long the attempt has been silent and after which step', () => {
    expect(stallText(stall)).toBe('no step for 4.6 s after step 17');
    expect(stallText({ last_step: null, silence_seconds: 1801.2 })).toBe('no first step 1801 s after start');
  });
  it('says how the bound was derived and what happens next', () => {
    expect(stallDetailText(stall)).toBe(
      'bound 4.1 s: 10 x steady step 0.4 s (14 steps); being restarted from its latest checkpoint (on_stall restart)');
    expect(stallDetailText({ ...stall, on_stall: 'alert' })).toContain('only recorded');
    expect(stallDetailText({ ...stall, on_stall: 'fail' })).toContain('ended as failed');
  });
  it('reads the flag from the run', () => {
    expect(stallOf({ flags: { stalled: stall } })).toBe(stall);
    expect(stallOf({ flags: {} })).toBeNull();
    expect(stallOf(null)).toBeNull();
  });
});
