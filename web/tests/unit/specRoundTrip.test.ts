// Every run spec field goes through the new-run form unchanged: each file of examples/, a spec
// with every field the contract has, and the text forms of the structured fields.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import openapiText from '../../../docs/openapi.yaml?raw';
import { BLANK_FORM, EMPTY_FORM, FORM_FIELDS, formToSpec, SKIP_CHECKS, specToForm } from '../../src/spec';
import {
  formatArgvOrText, formatConfig, formatEnv, parseArgvOrText, parseConfig, parseEnv, parseExitCodes,
} from '../../src/specFields';

const examples = import.meta.glob('../../../examples/*.yaml', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;

/** spec → form (as a pasted YAML is read) → spec. */
function roundTrip(spec: Record<string, unknown>) {
  const { spec: back, errors } = formToSpec(specToForm(spec, BLANK_FORM));
  return { back, errors };
}

describe('every example through the form', () => {
  it('finds the examples', () => {
    expect(Object.keys(examples).length).toBeGreaterThanOrEqual(5);
  });
  for (const [path, text] of Object.entries(examples)) {
    it(`${path.split('/').pop()} comes back unchanged`, () => {
      const spec = parse(text) as Record<string, unknown>;
      const { back, errors } = roundTrip(spec);
      expect(errors).toEqual([]);
      expect(back).toEqual(spec);
    });
  }
});

describe('every run-spec field', () => {
  const runSpec = (parse(openapiText) as any).components.schemas.RunSpec;

  it('has a control in the form for each field of the contract\'s RunSpec', () => {
    // gradient_accumulation_steps: docs/openapi.yaml lists it at the top level, but the server
    // (engine/core/spec/run_spec.cpp) reads it from config only and refuses it at the top level; the
    // form sends it as a config key.
    const notTopLevel = ['gradient_accumulation_steps'];
    const missing = Object.keys(runSpec.properties).filter((k) => !(FORM_FIELDS as readonly string[]).includes(k) && !notTopLevel.includes(k));
    expect(missing).toEqual([]);
  });

  const every = {
    name: 'every-field', cluster: 'c', dataset: 'd', model: 'llama3-8b', workload: 'maxtext',
    entrypoint: ['/bin/sh', '-c', 'echo "$X, a b"; exec python3 -m MaxText.train "$@"', 'sh'],
    config_file: 'MaxText/configs/base.yml', workdir: 'sub/dir',
    code_bundle: `sha256:${'ab'.repeat(32)}`, image: 'us-docker.pkg.dev/p/r/maxtext:2026-01',
    maxtext_version: '0.2.0', maxtext_fork: { keys: ['run_name', 'my_fork_key'], mesh_axes: ['data', 'fsdp', 'my_axis'] },
    env: { XLA_FLAGS: '--xla_a=true --xla_b=1', EMPTY: '', SPACED: ' a b ', URL: 'gs://b/x=y:z' },
    steps: 1000, per_device_batch_size: 0.5, max_target_length: 4096, num_slices: 2,
    parallelism: { ici_fsdp: -1, ici_tensor: 4, dcn_data: 2 },
    config: {
      remat_policy: 'full', learning_rate: 3e-4, enable_checkpointing: false, run_name: '123',
      quoted: 'true', nothing: null, list: [1, 'a'], nested: { a: { b: 2 } }, spaced: ' x ',
      single: "'q'", hash: '#not a comment', big: 1e21, gradient_accumulation_steps: 4,
    },
    preflight: 'compile', compile_cluster: 'other', checkpoint_period: 100, max_restarts: 0,
    restart_on_exit_codes: [1, 137, 0], min_slices: 1, priority: 'very-high',
    tags: ['a', 'b c'], skip_checks: ['hbm', 'config_keys'], force: true,
    on_stall: 'fail', stall_seconds: 600, init_from: { run: 'run_1', step: 0 },
    checkpoint_retention: { keep_last: 3, keep_every: 1000 }, max_recoveries: 0,
    project: 'ablations', notes: 'line one\n  line two ',
  };

  it('sends a spec with every field back unchanged', () => {
    const { back, errors } = roundTrip(every);
    expect(errors).toEqual([]);
    expect(back).toEqual(every);
  });
  it('keeps a command string, a command argv and a module entrypoint apart', () => {
    for (const spec of [
      { name: 'c', cluster: 'c', workload: 'command', command: 'python3 -c "print(1)" && echo ok' },
      { name: 'c', cluster: 'c', workload: 'command', command: ['python3', '-c', 'print(1)'] },
      { name: 'm', cluster: 'c', model: 'm', workload: 'reference', entrypoint: 'podium_reference.train', preflight: 'none' },
    ]) expect(roundTrip(spec).back).toEqual(spec);
  });
  it('keeps every priority and skip check', () => {
    for (const priority of ['very-low', 'low', 'medium', 'high', 'very-high']) expect(roundTrip({ name: 'p', cluster: 'c', priority }).back).toEqual({ name: 'p', cluster: 'c', priority });
    expect(roundTrip({ name: 's', cluster: 'c', skip_checks: [...SKIP_CHECKS] }).back.skip_checks).toEqual(['model', 'mesh', 'hbm', 'data', 'config_keys']);
  });
  it('keeps tags that have commas or edge spaces of their own', () => {
    for (const tags of [['a,b', 'c'], [' x'], ['[bracket]']]) expect(roundTrip({ name: 't', cluster: 'c', tags }).back.tags).toEqual(tags);
  });
  it('sends a field it has no control for as it came, and drops it when removed', () => {
    const spec = { name: 'x', cluster: 'c', a_future_field: 'alert', another: { run: 'run_1', step: 20 } };
    const form = specToForm(spec, BLANK_FORM);
    expect(form.extra).toEqual({ a_future_field: 'alert', another: { run: 'run_1', step: 20 } });
    expect(formToSpec(form).spec).toEqual(spec);
    expect(formToSpec({ ...form, extra: {} }).spec).toEqual({ name: 'x', cluster: 'c' });
  });
  it('keeps either retention bound alone and names half an init_from', () => {
    for (const checkpoint_retention of [{ keep_last: 2 }, { keep_every: 50 }]) {
      expect(roundTrip({ name: 'r', cluster: 'c', checkpoint_retention }).back).toEqual({ name: 'r', cluster: 'c', checkpoint_retention });
    }
    const half = formToSpec({ ...BLANK_FORM, name: 'h', cluster: 'c', init_from_run: 'run_1' });
    expect(half.errors.map((e) => e.field)).toEqual(['init_from.step']);
    const other = formToSpec({ ...BLANK_FORM, name: 'h', cluster: 'c', init_from_step: '20' });
    expect(other.errors.map((e) => e.field)).toEqual(['init_from.run']);
  });
  it('leaves out what is given as nothing, which the server reads as not given', () => {
    // engine/core/spec/run_spec.cpp: null is absent; an empty list and force false are its defaults.
    const spec = { name: 'n', cluster: 'c', dataset: null, min_slices: null, tags: [], restart_on_exit_codes: [], force: false };
    expect(roundTrip(spec).back).toEqual({ name: 'n', cluster: 'c' });
  });
  it('reads a pasted spec onto nothing given, so it gains no defaults', () => {
    expect(formToSpec(specToForm({ name: 'a', cluster: 'c' }, BLANK_FORM)).spec).toEqual({ name: 'a', cluster: 'c' });
    // A fresh form does carry the new-run defaults.
    expect(formToSpec({ ...EMPTY_FORM, name: 'a', cluster: 'c' }).spec).toMatchObject({ workload: 'reference', priority: 'medium', max_restarts: 3 });
  });
});

describe('text forms of the structured fields', () => {
  it('reads env lines, the value being everything after the first =', () => {
    expect(parseEnv('# comment\nXLA_FLAGS=--a=1 --b=2\n\nA=\r\n')).toEqual({ XLA_FLAGS: '--a=1 --b=2', A: '' });
    expect(formatEnv({ N: 1, B: true })).toBe('N=1\nB=true');
  });
  it('names env lines it cannot read', () => {
    const errors: { field: string; message: string }[] = [];
    parseEnv('NO_EQUALS\n1BAD=x\nA=1\nA=2', errors);
    expect(errors.map((e) => e.message)).toEqual(['"NO_EQUALS" is not NAME=value', '"1BAD=x" is not NAME=value', 'A is given twice']);
  });
  it('reads an argv as a JSON list and anything else as text', () => {
    expect(parseArgvOrText('MaxText.train', 'entrypoint')).toBe('MaxText.train');
    expect(parseArgvOrText(' ["a", "b c"] ', 'entrypoint')).toEqual(['a', 'b c']);
    expect(parseArgvOrText('', 'entrypoint')).toBeUndefined();
    expect(formatArgvOrText(['a', 'b c'])).toBe('["a","b c"]');
    for (const bad of ['[unclosed', '[]', '[1, 2]']) {
      const errors: { field: string; message: string }[] = [];
      expect(parseArgvOrText(bad, 'entrypoint', errors)).toBeUndefined();
      expect(errors.map((e) => e.field)).toEqual(['entrypoint']);
    }
  });
  it('reads exit codes 0-255', () => {
    expect(parseExitCodes('1, 137 0')).toEqual([1, 137, 0]);
    const errors: { field: string; message: string }[] = [];
    expect(parseExitCodes('256, -1, x', errors)).toEqual([]);
    expect(errors).toHaveLength(3);
  });
  it('writes a config string bare only when it reads back as itself', () => {
    expect(formatConfig({ a: 'full', b: '123', c: 'true', d: 3e-4 })).toBe('a: full\nb: "123"\nc: "true"\nd: 0.0003');
    expect(parseConfig('a: full\nb: "123"\nc: true\nd: [1, "x"]\ne: {"k": 1}\nf: \'q\'')).toEqual({ a: 'full', b: '123', c: true, d: [1, 'x'], e: { k: 1 }, f: 'q' });
  });
});
