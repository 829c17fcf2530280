import { describe, expect, it } from 'vitest';
import { ago, count, duration, executorLabel, gib, money, num, pct, progress, ratioDigits, ratioText, seconds } from '../../src/format';

describe('format', () => {
  it('keeps three significant digits below 100 and one decimal from 100 up', () => {
    expect(num(0.012345)).toBe('0.0123');
    expect(num(2345.8815)).toBe('2,345.9');
    expect(num(1153.5)).toBe('1,153.5');
    expect(num(42.42)).toBe('42.4');
    expect(num(null)).toBe('–');
    expect(num(Number.NaN)).toBe('–');
  });
  it('formats percentages, ratios, memory and money', () => {
    expect(pct(0.4123)).toBe('41.2%');
    expect(ratioText(0.25)).toBe('0.25×');
    expect(ratioText(60.2)).toBe('60.2×');
    expect(gib(63.9)).toBe('63.9 GiB');
    expect(money(1.5)).toBe('$1.50');
    expect(money(1234.4)).toBe('$1,234');
    expect(count(1048576)).toBe('1,048,576');
  });
  // Issue 31 point 6: the seed's 2x4x4 step time is 0.0339 of 2x2x1's, a 29.5× speed-up.
  it('reads a large speed-up as such', () => {
    expect(ratioText(0.0339, 'speed')).toBe('29.5× faster');
    expect(ratioText(1 / 29.5, 'speed')).toBe('29.5× faster');
    expect(ratioText(0.5, 'speed')).toBe('2.0× faster');
    expect(ratioText(2, 'speed')).toBe('2.0× slower');
    expect(ratioText(1.0, 'speed')).toBe('1.0×');
    // Within rounding of 1 it is the same speed, not "1.0× faster".
    expect(ratioText(0.996, 'speed')).toBe('1.0×');
    expect(ratioText(1.004, 'speed')).toBe('1.0×');
    expect(ratioText(1 / 1234, 'speed')).toBe('1234× faster');
    expect(ratioText(1e-9, 'speed')).toBe('1.0e9× faster');
    expect(ratioText(3.2e7, 'speed')).toBe('3.2e7× slower');
  });
  it('keeps at least two significant digits in a plain ratio', () => {
    expect(ratioText(60, 'plain')).toBe('60×');
    expect(ratioText(1.0)).toBe('1.0×');
    expect(ratioText(0.5)).toBe('0.50×');
    expect(ratioText(2)).toBe('2.0×');
    expect(ratioText(1234)).toBe('1234×');
    expect(ratioText(0.0339)).toBe('0.0339×');
    expect(ratioText(1.05)).toBe('1.05×');
    expect(ratioText(0.1)).toBe('0.10×');
    expect(ratioText(99.96)).toBe('100×');
    // Tiny and huge: two significant digits in scientific form.
    expect(ratioText(1.23e-4)).toBe('1.2e-4×');
    expect(ratioText(1e-9)).toBe('1.0e-9×');
    expect(ratioText(2.5e6)).toBe('2.5e6×');
    expect(ratioText(999999.7)).toBe('1.0e6×');
    expect(ratioText(1e12)).toBe('1.0e12×');
  });
  it('never lets 25× and 40× read alike', () => {
    const texts = new Set<string>();
    for (let tenths = 250; tenths <= 400; tenths += 1) texts.add(ratioText(10 / tenths, 'speed'));
    // One decimal: 25.0 to 40.0 gives 151 distinct readings.
    expect(texts.size).toBe(151);
    expect(ratioText(1 / 25, 'speed')).toBe('25× faster');
    expect(ratioText(1 / 40, 'speed')).toBe('40× faster');
    expect(ratioText(1 / 25, 'plain')).not.toBe(ratioText(1 / 40, 'plain'));
  });
  it('shows no ratio for zero, missing or nonsense values', () => {
    expect(ratioText(0)).toBe('0×');
    expect(ratioText(0, 'speed')).toBe('–');
    expect(ratioText(null)).toBe('–');
    expect(ratioText(undefined, 'speed')).toBe('–');
    expect(ratioText(Number.NaN)).toBe('–');
    expect(ratioText(Number.POSITIVE_INFINITY)).toBe('–');
    expect(ratioText(-2)).toBe('–');
  });
  it('gives a ratio its digits', () => {
    expect(ratioDigits(29.4985)).toBe('29.5');
    expect(ratioDigits(60)).toBe('60');
    expect(ratioDigits(10)).toBe('10');
    expect(ratioDigits(0.001)).toBe('0.0010');
    expect(ratioDigits(0.000999)).toBe('1.0e-3');
  });
  it('formats step times and durations', () => {
    expect(seconds(0.218)).toBe('218 ms');
    expect(seconds(0.0042)).toBe('4.20 ms');
    expect(seconds(2.5)).toBe('2.50 s');
    expect(seconds(3725)).toBe('1h 2m 5s');
    expect(duration(65)).toBe('1m 5s');
  });
  it('says how long ago against an injected clock', () => {
    const now = Date.parse('2026-11-24T12:00:00Z');
    expect(ago('2026-11-24T11:59:30Z', now)).toBe('30s ago');
    expect(ago('2026-11-24T11:00:00Z', now)).toBe('1h ago');
    expect(ago('2026-11-21T12:00:00Z', now)).toBe('3d ago');
    expect(ago('not a time', now)).toBe('–');
  });
  it('counts progress as steps done out of steps asked (steps are numbered from 0)', () => {
    expect(progress(71, 300)).toBe('72 / 300');
    expect(progress(null, 300)).toBe('0 / 300');
    expect(progress(299, 300)).toBe('300 / 300');
  });
});

describe('executorLabel', () => {
  it('names where a cluster runs its ranks', () => {
    expect(executorLabel({})).toBe('runs on Podium agents');
    expect(executorLabel({ executor: { kind: 'agent' } })).toBe('runs on Podium agents');
    expect(executorLabel({ executor: { kind: 'slurm', partition: 'a3mega', account: '', qos: 'high' } }))
      .toBe('runs through Slurm (partition a3mega, qos high)');
    expect(executorLabel({ executor: { kind: 'slurm', partition: '' } })).toBe('runs through Slurm');
    expect(executorLabel({ executor: { kind: 'kubernetes', context: 'gke_p', namespace: 'default', queue: 'multislice-queue' } }))
      .toBe('runs through Kubernetes JobSets (context gke_p, namespace default, queue multislice-queue)');
  });
});
