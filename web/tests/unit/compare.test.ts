import { describe, expect, it } from 'vitest';
import { configDiff, METRICS, ratioOf, toCsv, toMarkdown, verdict } from '../../src/compare';
import type { CompareRow } from '../../src/types';

const row = (over: Partial<CompareRow>): CompareRow => ({
  run_id: 'r', name: 'r', state: 'succeeded', failure_class: null, imported: false, model: 'llama2-7b', num_slices: 1,
  steady_steps: 20, basis: { tflops_per_device: 'logged', tokens_per_second_per_device: 'logged', goodput: 'timestamps' },
  ratios: {}, accelerator: 'v6e-8', topology: '2x4', chips: 8, devices: 8, hosts: 1,
  per_device_batch_size: 1, max_target_length: 4096, step_seconds: 2, tflops_per_device: 200,
  tokens_per_second_per_device: 2048, mfu: 0.22, hbm_gib_used: 20, goodput: 0.9, cost_per_billion_tokens: 10, ...over,
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

describe('exports', () => {
  it('writes CSV with ratios and quoting', () => {
    const csv = toCsv([base, fast], base).trim().split('\n');
    expect(csv).toHaveLength(3);
    expect(csv[0].startsWith('Run,Accelerator,Topology,Chips,Batch/device,Sequence,Step time (s),Step time (s) vs baseline')).toBe(true);
    const cells = csv[2].split(',');
    expect(cells[0]).toBe('tpu7x|64');
    expect(cells[6]).toBe('0.5');
    expect(cells[7]).toBe('0.250');
    expect(toCsv([row({ name: 'a,"b"' })], base)).toContain('"a,""b"""');
  });
  it('writes a Markdown table with escaped pipes', () => {
    const md = toMarkdown([base, fast], base).trim().split('\n');
    expect(md).toHaveLength(4);
    expect(md[1]).toMatch(/^\|---\|/);
    expect(md[3]).toContain('tpu7x\\|64');
    expect(md[3]).toContain('| 4.000 |');
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
