import { describe, expect, it } from 'vitest';
import { memoryVerdict } from '../../src/memoryVerdict';
import type { Plan } from '../../src/types';

type Memory = NonNullable<Plan['memory']>;
const base = { per_device_gib: 27.6, low_gib: 24.8, high_gib: 33.1, capacity_gib: 15.25 } as Memory;

describe('HBM verdict line', () => {
  it('a step that fits only through rematerialization says so, with its floor, as a warning', () => {
    const m = { ...base, verdict: 'fits', fits: true, remat_pressure: true, remat_floor: { gib: 12.4, low_gib: 10.5, high_gib: 14.9 } } as Memory;
    expect(memoryVerdict(m)).toEqual({ text: 'fits through rematerialization: floor 12.4 GiB, slower steps', tone: 'warn' });
  });
  it('plain verdicts keep their words and tones', () => {
    expect(memoryVerdict({ ...base, per_device_gib: 9, verdict: 'fits', fits: true, remat_pressure: false } as Memory)).toEqual({ text: 'fits', tone: 'good' });
    expect(memoryVerdict({ ...base, verdict: 'uncertain', fits: false } as Memory)).toEqual({ text: 'uncertain', tone: 'warn' });
    expect(memoryVerdict({ ...base, verdict: 'does_not_fit', fits: false } as Memory)).toEqual({ text: 'does not fit', tone: 'bad' });
  });
  it('a plan stored without a verdict reads it from its fits flag', () => {
    expect(memoryVerdict({ ...base, verdict: undefined, fits: false } as unknown as Memory).text).toBe('does not fit');
  });
});
