import { describe, expect, it, vi } from 'vitest';
import {
  applyAlternative, canSubmit, debounce, EMPTY_FORM, formToSpec, parseConfig, parseParallelism,
  parseRunYaml, specToForm,
} from '../../src/spec';

describe('form → spec', () => {
  it('builds the run spec the API takes', () => {
    const { spec, errors } = formToSpec({
      ...EMPTY_FORM, name: 'a', cluster: 'v7', dataset: 'd', model: 'llama3-8b', workload: 'maxtext',
      steps: '100', per_device_batch_size: '0.5', max_target_length: '4096', parallelism: 'ici_fsdp=16, ici_tensor=4',
      config: 'remat_policy: full\nlearning_rate: 3e-4\nenable_checkpointing: false', min_slices: '1', tags: 'a, b',
    });
    expect(errors).toEqual([]);
    expect(spec).toMatchObject({
      name: 'a', cluster: 'v7', dataset: 'd', model: 'llama3-8b', workload: 'maxtext', steps: 100,
      per_device_batch_size: 0.5, max_target_length: 4096, parallelism: { ici_fsdp: 16, ici_tensor: 4 },
      config: { remat_policy: 'full', learning_rate: 0.0003, enable_checkpointing: false }, min_slices: 1, tags: ['a', 'b'],
    });
  });
  it('names every field it cannot read', () => {
    const { errors } = formToSpec({ ...EMPTY_FORM, steps: '1.5', parallelism: 'fsdp', config: 'no colon here', per_device_batch_size: '-1' });
    expect(errors.map((e) => e.field).sort()).toEqual(['config', 'parallelism', 'per_device_batch_size', 'steps']);
  });
  it('round-trips a spec through the form', () => {
    const spec = { name: 'r', cluster: 'c', model: 'm', workload: 'reference', steps: 10, per_device_batch_size: 4, max_target_length: 128, parallelism: { ici_data: 2 }, config: { learning_rate: 0.003 }, tags: ['x'] };
    const { spec: back } = formToSpec(specToForm(spec));
    expect(back).toMatchObject(spec);
  });
  it('parses axis lists and config lines', () => {
    expect(parseParallelism('ici_fsdp=-1\ndcn_data: 2')).toEqual({ ici_fsdp: -1, dcn_data: 2 });
    expect(parseConfig('# comment\nopt_type: "muon"\nx=1')).toEqual({ opt_type: 'muon', x: 1 });
  });
});

describe('pasted YAML', () => {
  it('reads a run.yaml', async () => {
    expect(await parseRunYaml('name: r\nsteps: 300\nconfig:\n  learning_rate: 0.003\ntags: [demo]\n')).toEqual({ name: 'r', steps: 300, config: { learning_rate: 0.003 }, tags: ['demo'] });
  });
  it('refuses what is not a mapping, with the reason', async () => {
    await expect(parseRunYaml('- a\n- b')).rejects.toThrow(/mapping/);
    await expect(parseRunYaml('name: [unclosed')).rejects.toThrow();
  });
});

describe('plan alternatives', () => {
  it('replaces the whole parallelism and merges config', () => {
    const spec = { steps: 10, parallelism: { ici_fsdp: 8, ici_tensor: 4, ici_sequence: 2 }, config: { remat_policy: 'minimal', opt_type: 'muon' } };
    expect(applyAlternative(spec, { parallelism: { ici_fsdp: 16, ici_tensor: 4 } }).parallelism).toEqual({ ici_fsdp: 16, ici_tensor: 4 });
    expect(applyAlternative(spec, { config: { remat_policy: 'full' } }).config).toEqual({ remat_policy: 'full', opt_type: 'muon' });
    expect(applyAlternative(spec, { steps: 7 }).steps).toBe(7);
    expect(spec.steps).toBe(10);
  });
  it('allows submit only for a plan without errors, or when forced', () => {
    expect(canSubmit([], { ok: true }, false, false)).toBe(true);
    expect(canSubmit([], { ok: false }, false, false)).toBe(false);
    expect(canSubmit([], { ok: false }, true, false)).toBe(true);
    expect(canSubmit([{ field: 'steps', message: 'x' }], { ok: true }, true, false)).toBe(false);
    expect(canSubmit([], { ok: true }, false, true)).toBe(false);
    expect(canSubmit([], null, false, false)).toBe(false);
  });
});

describe('debounce', () => {
  it('asks once after the user pauses', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const d = debounce(fn, 300);
    d(1); vi.advanceTimersByTime(100); d(2); vi.advanceTimersByTime(100); d(3);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(300);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(fn).toHaveBeenCalledWith(3);
    d(4); d.cancel(); vi.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.useRealTimers();
  });
});
