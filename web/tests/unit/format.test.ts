import { describe, expect, it } from 'vitest';
import { ago, count, duration, executorLabel, gib, money, num, pct, progress, ratio, seconds } from '../../src/format';

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
    expect(ratio(0.25)).toBe('0.25×');
    expect(ratio(60.2)).toBe('60.2×');
    expect(gib(63.9)).toBe('63.9 GiB');
    expect(money(1.5)).toBe('$1.50');
    expect(money(1234.4)).toBe('$1,234');
    expect(count(1048576)).toBe('1,048,576');
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
