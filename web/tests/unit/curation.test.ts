import { describe, expect, it } from 'vitest';
import { dayAfter, dayOf, dayStart } from '../../src/components/CurationFilters';
import { mayCurate, parseTags } from '../../src/components/RunCuration';
import { savedSearch } from '../../src/components/SaveCompare';
import type { Me, Run, SavedCompare } from '../../src/types';

describe('date range filters', () => {
  it('a From day is the instant it starts (UTC)', () => {
    expect(dayStart('2026-11-27')).toBe('2026-11-27T00:00:00Z');
    expect(dayStart('')).toBe('');
    expect(dayStart('27.11.2026')).toBe('');
  });
  it('a To day is inclusive: until is the next day, across month and year ends', () => {
    expect(dayAfter('2026-11-27')).toBe('2026-11-28T00:00:00Z');
    expect(dayAfter('2026-02-28')).toBe('2026-03-01T00:00:00Z');
    expect(dayAfter('2026-12-31')).toBe('2027-01-01T00:00:00Z');
    expect(dayAfter('')).toBe('');
  });
  it('reads the URL back into the day inputs', () => {
    expect(dayOf('2026-11-27T00:00:00Z')).toBe('2026-11-27');
    expect(dayOf(dayAfter('2026-11-27'), true)).toBe('2026-11-27');
    expect(dayOf('2026-11-27T12:00:00+01:00')).toBe('2026-11-27');
    expect(dayOf('not a time')).toBe('');
  });
});

describe('run curation', () => {
  it('tags typed with commas or spaces, each once, in order', () => {
    expect(parseTags('sweep, lr-3e-4 sweep,,  v5p')).toEqual(['sweep', 'lr-3e-4', 'v5p']);
    expect(parseTags('  ')).toEqual([]);
  });
  it('the owner (a member) or an admin may curate; others and viewers may not', () => {
    const run = { owner: 'ana' } as Run;
    const me = (username: string, role: Me['role']) => ({ username, role }) as Me;
    expect(mayCurate(me('ana', 'member'), run)).toBe(true);
    expect(mayCurate(me('bo', 'admin'), run)).toBe(true);
    expect(mayCurate(me('bo', 'member'), run)).toBe(false);
    expect(mayCurate(me('ana', 'viewer'), run)).toBe(false);
    expect(mayCurate(null, run)).toBe(false);
  });
  it('a saved view stands for the compare URL of its runs and baseline', () => {
    const s = { runs: ['run_a', 'run_b'], baseline: 'run_b' } as SavedCompare;
    expect(savedSearch(s).toString()).toBe('runs=run_a%2Crun_b&baseline=run_b');
  });
});
