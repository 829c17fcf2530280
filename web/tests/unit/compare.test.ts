import { describe, expect, it } from 'vitest';
import { configDiff, METRICS, metricRatioText, ratioOf, toCsv, toMarkdown, verdict } from '../../src/compare';
import type { CompareRow } from '../../src/types';

const row = (over: Partial<CompareRow>): CompareRow => ({
  run_id: 'r', name: 'r', state: 'succeeded', failure_class: null, imported: false, model: 'llama2-7b', num_slices: 1,
  steady_steps: 20, basis: { tflops_per_device: 'logged', tokens_per_second_per_device: 'logged', goodput: 'timestamps' },
  ratios: {}, accelerator: 'v6e-8', topology: '2x4', chips: 8, devices: 8, hosts: 1,
  per_device_batch_size: 1, max_target_length: 4096, step_seconds: 2, tflops_per_device: 200,
  tokens_per_second_per_device: 2048, mfu: 0.22, plan_check: null, hbm_gib_used: 20, goodput: 0.9, cost_per_billion_tokens: 10, ...over,
});

const base = row({ run_id: 'a', name: 'v6e' });
const fast = row({ run_id: 'b', name: 'tpu7x|64', accelerator: 'tpu7x-64', step_seconds: 0.5, tflops_per_device: 800, tokens_per_second_per_device: 8192, mfu: 0.69, cost_per_billion_tokens: null });

describe('compare ratios', () => {
  it('divides by the baseline', () => {
    expect(ratioOf(fast, base, 'step_seconds')).toBe(0.25);
    expect(ratioOf(fast, base, 'tflops_per_device')).toBe(4);
    expect(ratioOf(fast, base, 'cost_per_billion_tokens')).toBeNull();
    expect(ratioOf(fast, row({ step_seconds: 0 }), 'step_seconds')).toBeNull();
  });
  it('knows which direction is better', () => {
    const step = METRICS.find((m) => m.key === 'step_seconds')!;
    const tput = METRICS.find((m) => m.key === 'tokens_per_second_per_device')!;
    const hbm = METRICS.find((m) => m.key === 'hbm_gib_used')!;
    expect(verdict(step, 0.25)).toBe('better');
    expect(verdict(tput, 0.25)).toBe('worse');
    expect(verdict(tput, 1.001)).toBe('same');
    expect(verdict(hbm, 2)).toBe('none');
  });
});

// Issue 31 point 6: the seed's 2x4x4 against 2x2x1, a 29.5× shorter step and 60× the TFLOP/s.
describe('large ratios', () => {
  const slow = row({ run_id: 'a', name: '2x2x1', step_seconds: 29.5, tflops_per_device: 1.5 });
  const quick = row({ run_id: 'b', name: '2x4x4', step_seconds: 1.0, tflops_per_device: 90 });
  const step = METRICS.find((m) => m.key === 'step_seconds')!;
  const tflops = METRICS.find((m) => m.key === 'tflops_per_device')!;
  it('reads as a speed-up on the page', () => {
    expect(metricRatioText(step, ratioOf(quick, slow, 'step_seconds'))).toBe('29.5× faster');
    expect(metricRatioText(tflops, ratioOf(quick, slow, 'tflops_per_device'))).toBe('60×');
    // The other way round: the small topology is 29.5× slower.
    expect(metricRatioText(step, ratioOf(slow, quick, 'step_seconds'))).toBe('29.5× slower');
    expect(metricRatioText(step, null)).toBe('–');
  });
  it('reads the same in both exports', () => {
    const csv = toCsv([slow, quick], slow).trim().split('\n');
    const cells = csv[2].split(',');
    expect(cells[7]).toBe('29.5× faster');
    expect(cells[9]).toBe('60×');
    // The baseline's own ratios are 1.
    expect(csv[1].split(',')[7]).toBe('1.0×');
    const md = toMarkdown([slow, quick], slow);
    expect(md).toContain('| 1 | 29.5× faster | 90 | 60× |');
  });
});

describe('exports', () => {
  it('writes CSV with ratios and quoting', () => {
    const csv = toCsv([base, fast], base).trim().split('\n');
    expect(csv).toHaveLength(3);
    expect(csv[0].startsWith('Run,Accelerator,Topology,Chips,Batch/device,Sequence,Step time (s),Step time (s) vs baseline')).toBe(true);
    const cells = csv[2].split(',');
    expect(cells[0]).toBe('tpu7x|64');
    expect(cells[6]).toBe('0.5');
    // Step time 0.25 of the baseline's: a 4× speed-up.
    expect(cells[7]).toBe('4.0× faster');
    expect(cells[9]).toBe('4.0×');
    expect(toCsv([row({ name: 'a,"b"' })], base)).toContain('"a,""b"""');
  });
  it('writes a Markdown table with escaped pipes', () => {
    const md = toMarkdown([base, fast], base).trim().split('\n');
    expect(md).toHaveLength(4);
    expect(md[1]).toMatch(/^\|---\|/);
    expect(md[3]).toContain('tpu7x\\|64');
    expect(md[3]).toContain('| 4.0× faster |');
    expect(md[3]).toContain('| 800 | 4.0× |');
  });
});

describe('config diff', () => {
  it('shows only what differs, flattened', () => {
    const d = configDiff([
      { accelerator: 'v6e-8', config: { remat_policy: 'full', lr: 1 }, parallelism: { ici_fsdp: 8 } },
      { accelerator: 'tpu7x-64', config: { remat_policy: 'full' }, parallelism: { ici_fsdp: 8 } },
    ]);
    expect(d).toEqual([
      { key: 'accelerator', values: ['"v6e-8"', '"tpu7x-64"'] },
      { key: 'config.lr', values: ['1', '–'] },
    ]);
  });
});
