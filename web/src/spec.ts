// The new-run form's state, the run spec it stands for, and the plan's one-click alternatives.
import {
  formatArgvOrText, formatConfig, formatEnv, formatExitCodes, formatParallelism, parseArgvOrText,
  parseConfig, parseEnv, parseExitCodes, parseParallelism,
} from './specFields';

export { formatConfig, formatParallelism, parseConfig, parseParallelism } from './specFields';

export const PRIORITIES = ['very-low', 'low', 'medium', 'high', 'very-high'] as const;
/** The checks a run may skip one by one (`force` skips them all). */
export const SKIP_CHECKS = ['model', 'mesh', 'hbm', 'data', 'config_keys'] as const;
/** What Podium does when a running attempt stops making steps. */
export const ON_STALL = ['alert', 'restart', 'fail'] as const;

/**
 * Every field is text as typed; "" means "not given" (the server's default), so a spec
 * round-trips through the form without gaining defaults it did not have.
 */
export interface FormState {
  name: string;
  cluster: string;
  dataset: string;
  model: string;
  /** '' : not given (the server's default, maxtext) */
  workload: '' | 'maxtext' | 'reference' | 'command';
  /** a shell string, or a JSON list of strings for an argv */
  command: string;
  /** a Python module, or a JSON list of strings for an argv */
  entrypoint: string;
  config_file: string;
  workdir: string;
  code_bundle: string;
  image: string;
  maxtext_version: string;
  /** maxtext_fork.keys: the fork's base.yml keys, one per line (or comma separated) */
  maxtext_fork_keys: string;
  /** maxtext_fork.mesh_axes: "data, fsdp, tensor" in the fork's order */
  maxtext_fork_mesh_axes: string;
  /** one NAME=value per line */
  env: string;
  steps: string;
  per_device_batch_size: string;
  max_target_length: string;
  num_slices: string;
  /** "ici_fsdp=16, ici_tensor=4" */
  parallelism: string;
  /** one "key: value" per line */
  config: string;
  /** '' : not given (no compile check) */
  preflight: '' | 'compile' | 'none';
  compile_cluster: string;
  checkpoint_period: string;
  max_restarts: string;
  /** "1, 137" */
  restart_on_exit_codes: string;
  min_slices: string;
  /** '' : not given (medium) */
  priority: '' | (typeof PRIORITIES)[number];
  tags: string;
  skip_checks: string[];
  force: boolean;
  /** '' : not given (restart) */
  on_stall: '' | (typeof ON_STALL)[number];
  stall_seconds: string;
  /** init_from.run and init_from.step: both, or neither */
  init_from_run: string;
  init_from_step: string;
  /** checkpoint_retention.keep_last / keep_every */
  keep_last: string;
  keep_every: string;
  max_recoveries: string;
  project: string;
  notes: string;
  /** Fields of a pasted spec the form has no control for: sent as they came. */
  extra: Record<string, unknown>;
}

/** Nothing given: what a pasted spec is read onto. */
export const BLANK_FORM: FormState = {
  name: '', cluster: '', dataset: '', model: '', workload: '', command: '', entrypoint: '',
  config_file: '', workdir: '', code_bundle: '', image: '', maxtext_version: '',
  maxtext_fork_keys: '', maxtext_fork_mesh_axes: '', env: '',
  steps: '', per_device_batch_size: '', max_target_length: '', num_slices: '', parallelism: '',
  config: '', preflight: '', compile_cluster: '', checkpoint_period: '', max_restarts: '',
  restart_on_exit_codes: '', min_slices: '', priority: '', tags: '', skip_checks: [], force: false,
  on_stall: '', stall_seconds: '', init_from_run: '', init_from_step: '', keep_last: '', keep_every: '',
  max_recoveries: '', project: '', notes: '', extra: {},
};

/** A fresh new-run form: a small reference run. */
export const EMPTY_FORM: FormState = {
  ...BLANK_FORM, workload: 'reference', steps: '100', per_device_batch_size: '1',
  max_target_length: '128', max_restarts: '3', priority: 'medium',
};

/** The run-spec fields the form has a control for (docs/openapi.yaml RunSpec, and skip_checks). */
export const FORM_FIELDS = [
  'name', 'cluster', 'dataset', 'model', 'workload', 'command', 'entrypoint', 'config_file',
  'workdir', 'code_bundle', 'image', 'maxtext_version', 'maxtext_fork', 'env', 'steps', 'per_device_batch_size',
  'max_target_length', 'num_slices', 'parallelism', 'config', 'preflight', 'compile_cluster',
  'checkpoint_period', 'max_restarts', 'restart_on_exit_codes', 'min_slices', 'priority', 'tags',
  'skip_checks', 'force', 'on_stall', 'stall_seconds', 'init_from', 'checkpoint_retention',
  'max_recoveries', 'project', 'notes',
] as const;

export interface FieldError { field: string; message: string }

function intField(v: string, field: string, errors: FieldError[], min = 0): number | undefined {
  if (v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) { errors.push({ field, message: `must be an integer ≥ ${min}` }); return undefined; }
  return n;
}

/** "a, b" → ["a", "b"]; a JSON list when a tag has a comma or edge spaces of its own. */
function parseTags(text: string, errors: FieldError[]): string[] {
  const t = text.trim();
  if (t.startsWith('[')) {
    const v = parseArgvOrText(t, 'tags', errors);
    return Array.isArray(v) ? v : [];
  }
  return t.split(',').map((x) => x.trim()).filter(Boolean);
}

function formatTags(tags: unknown): string {
  if (!Array.isArray(tags)) return '';
  const plain = tags.every((x) => typeof x === 'string' && x !== '' && !x.includes(',') && x.trim() === x) && !String(tags[0] ?? '').startsWith('[');
  return plain ? tags.join(', ') : JSON.stringify(tags);
}

/** The run spec the form stands for, and what in the form cannot be read. */
export function formToSpec(f: FormState): { spec: Record<string, unknown>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const spec: Record<string, unknown> = { name: f.name.trim() || 'untitled', cluster: f.cluster };
  const text = (key: keyof FormState & string) => {
    const v = (f[key] as string).trim();
    if (v !== '') spec[key] = v;
  };
  text('dataset');
  text('model');
  text('workload');
  const command = parseArgvOrText(f.command, 'command', errors);
  if (command !== undefined) spec.command = command;
  const entrypoint = parseArgvOrText(f.entrypoint, 'entrypoint', errors);
  if (entrypoint !== undefined) spec.entrypoint = entrypoint;
  text('config_file');
  text('workdir');
  text('code_bundle');
  text('image');
  text('maxtext_version');
  const names = (v: string) => v.split(/[\s,]+/).filter((s) => s !== '');
  const forkKeys = names(f.maxtext_fork_keys);
  const forkAxes = names(f.maxtext_fork_mesh_axes);
  if (forkKeys.length || forkAxes.length) {
    const fork: Record<string, string[]> = {};
    if (forkKeys.length) fork.keys = forkKeys;
    if (forkAxes.length) fork.mesh_axes = forkAxes;
    spec.maxtext_fork = fork;
  }
  const env = parseEnv(f.env, errors);
  if (Object.keys(env).length) spec.env = env;
  const steps = intField(f.steps, 'steps', errors, 1);
  if (steps !== undefined) spec.steps = steps;
  if (f.per_device_batch_size.trim() !== '') {
    const b = Number(f.per_device_batch_size);
    if (!Number.isFinite(b) || b <= 0) errors.push({ field: 'per_device_batch_size', message: 'must be a positive number' });
    else spec.per_device_batch_size = b;
  }
  const seq = intField(f.max_target_length, 'max_target_length', errors, 1);
  if (seq !== undefined) spec.max_target_length = seq;
  const slices = intField(f.num_slices, 'num_slices', errors, 1);
  if (slices !== undefined) spec.num_slices = slices;
  const par = parseParallelism(f.parallelism, errors);
  if (Object.keys(par).length) spec.parallelism = par;
  const cfg = parseConfig(f.config, errors);
  if (Object.keys(cfg).length) spec.config = cfg;
  text('preflight');
  text('compile_cluster');
  const ckpt = intField(f.checkpoint_period, 'checkpoint_period', errors, 1);
  if (ckpt !== undefined) spec.checkpoint_period = ckpt;
  const restarts = intField(f.max_restarts, 'max_restarts', errors, 0);
  if (restarts !== undefined) spec.max_restarts = restarts;
  const codes = parseExitCodes(f.restart_on_exit_codes, errors);
  if (codes.length) spec.restart_on_exit_codes = codes;
  const minSlices = intField(f.min_slices, 'min_slices', errors, 1);
  if (minSlices !== undefined) spec.min_slices = minSlices;
  text('priority');
  const tags = parseTags(f.tags, errors);
  if (tags.length) spec.tags = tags;
  if (f.skip_checks.length) spec.skip_checks = [...f.skip_checks];
  if (f.force) spec.force = true;
  text('on_stall');
  const stall = intField(f.stall_seconds, 'stall_seconds', errors, 1);
  if (stall !== undefined) spec.stall_seconds = stall;
  const fromStep = intField(f.init_from_step, 'init_from.step', errors, 0);
  if (f.init_from_run.trim() !== '' || fromStep !== undefined) {
    if (f.init_from_run.trim() === '') errors.push({ field: 'init_from.run', message: 'names the run whose checkpoint to start from' });
    else if (fromStep === undefined) { if (f.init_from_step.trim() === '') errors.push({ field: 'init_from.step', message: 'names the step of that run\'s checkpoint' }); }
    else spec.init_from = { run: f.init_from_run.trim(), step: fromStep };
  }
  const keepLast = intField(f.keep_last, 'checkpoint_retention.keep_last', errors, 1);
  const keepEvery = intField(f.keep_every, 'checkpoint_retention.keep_every', errors, 1);
  if (keepLast !== undefined || keepEvery !== undefined) {
    const retention: Record<string, number> = {};
    if (keepLast !== undefined) retention.keep_last = keepLast;
    if (keepEvery !== undefined) retention.keep_every = keepEvery;
    spec.checkpoint_retention = retention;
  }
  const recoveries = intField(f.max_recoveries, 'max_recoveries', errors, 0);
  if (recoveries !== undefined) spec.max_recoveries = recoveries;
  text('project');
  if (f.notes.trim() !== '') spec.notes = f.notes;
  for (const [k, v] of Object.entries(f.extra)) if (!(k in spec)) spec[k] = v;
  return { spec, errors };
}

/** The form that shows a spec (a pasted YAML, an alternative applied, a run cloned). */
export function specToForm(spec: Record<string, any>, base: FormState = EMPTY_FORM): FormState {
  const str = (v: unknown, d: string) => (v === undefined || v === null ? d : String(v));
  const given = (k: string) => spec[k] !== undefined && spec[k] !== null;
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (!(FORM_FIELDS as readonly string[]).includes(k)) extra[k] = v;
  return {
    name: str(spec.name, base.name),
    cluster: str(spec.cluster, base.cluster),
    dataset: str(spec.dataset, base.dataset),
    model: str(spec.model, base.model),
    workload: str(spec.workload, base.workload) as FormState['workload'],
    command: given('command') ? formatArgvOrText(spec.command) : base.command,
    entrypoint: given('entrypoint') ? formatArgvOrText(spec.entrypoint) : base.entrypoint,
    config_file: str(spec.config_file, base.config_file),
    workdir: str(spec.workdir, base.workdir),
    code_bundle: str(spec.code_bundle, base.code_bundle),
    image: str(spec.image, base.image),
    maxtext_version: str(spec.maxtext_version, base.maxtext_version),
    maxtext_fork_keys: Array.isArray(spec.maxtext_fork?.keys) ? spec.maxtext_fork.keys.map(String).join('\n') : base.maxtext_fork_keys,
    maxtext_fork_mesh_axes: Array.isArray(spec.maxtext_fork?.mesh_axes) ? spec.maxtext_fork.mesh_axes.map(String).join(', ') : base.maxtext_fork_mesh_axes,
    env: given('env') ? formatEnv(spec.env) : base.env,
    steps: str(spec.steps, base.steps),
    per_device_batch_size: str(spec.per_device_batch_size, base.per_device_batch_size),
    max_target_length: str(spec.max_target_length, base.max_target_length),
    num_slices: str(spec.num_slices, base.num_slices),
    parallelism: given('parallelism') ? formatParallelism(spec.parallelism) : base.parallelism,
    config: given('config') ? formatConfig(spec.config) : base.config,
    preflight: str(spec.preflight, base.preflight) as FormState['preflight'],
    compile_cluster: str(spec.compile_cluster, base.compile_cluster),
    checkpoint_period: str(spec.checkpoint_period, base.checkpoint_period),
    max_restarts: str(spec.max_restarts, base.max_restarts),
    restart_on_exit_codes: given('restart_on_exit_codes') ? formatExitCodes(spec.restart_on_exit_codes) : base.restart_on_exit_codes,
    min_slices: str(spec.min_slices, base.min_slices),
    priority: str(spec.priority, base.priority) as FormState['priority'],
    tags: given('tags') ? formatTags(spec.tags) : base.tags,
    skip_checks: Array.isArray(spec.skip_checks) ? spec.skip_checks.map(String) : base.skip_checks,
    force: typeof spec.force === 'boolean' ? spec.force : base.force,
    on_stall: str(spec.on_stall, base.on_stall) as FormState['on_stall'],
    stall_seconds: str(spec.stall_seconds, base.stall_seconds),
    init_from_run: given('init_from') ? str(spec.init_from.run, '') : base.init_from_run,
    init_from_step: given('init_from') ? str(spec.init_from.step, '') : base.init_from_step,
    keep_last: given('checkpoint_retention') ? str(spec.checkpoint_retention.keep_last, '') : base.keep_last,
    keep_every: given('checkpoint_retention') ? str(spec.checkpoint_retention.keep_every, '') : base.keep_every,
    max_recoveries: str(spec.max_recoveries, base.max_recoveries),
    project: str(spec.project, base.project),
    notes: str(spec.notes, base.notes),
    extra,
  };
}

/**
 * A pasted run YAML (the CLI's run.yaml) → the spec; rejects with the parser's message. The
 * YAML parser is loaded on first use: most visits never paste YAML.
 */
export async function parseRunYaml(text: string): Promise<Record<string, unknown>> {
  const { parse } = await import('yaml');
  const doc = parse(text);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('a run spec is a YAML mapping of fields');
  return doc as Record<string, unknown>;
}

/**
 * A plan alternative's `set` applied to a spec: `parallelism` replaces the whole parallelism
 * (an alternative names every axis it wants), `config` merges key by key, anything else
 * replaces the field.
 */
export function applyAlternative(spec: Record<string, any>, set: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...spec };
  for (const [k, v] of Object.entries(set)) {
    if (k === 'config' && v && typeof v === 'object') out.config = { ...(spec.config ?? {}), ...v };
    else out[k] = v;
  }
  return out;
}

/** Trailing-edge debounce: the plan is asked for once the user pauses typing. */
export function debounce<A extends unknown[]>(fn: (...a: A) => void, ms: number,
  timers: { set: (f: () => void, ms: number) => unknown; clear: (t: unknown) => void } = { set: (f, ms) => setTimeout(f, ms), clear: (t) => clearTimeout(t as number) }) {
  let t: unknown;
  const call = (...a: A) => {
    if (t !== undefined) timers.clear(t);
    t = timers.set(() => { t = undefined; fn(...a); }, ms);
  };
  call.cancel = () => { if (t !== undefined) timers.clear(t); t = undefined; };
  return call;
}

/** Submit is allowed when the form reads and the plan has no error, or the user forces it. */
export function canSubmit(formErrors: FieldError[], plan: { ok: boolean } | null, force: boolean, busy: boolean): boolean {
  if (busy || formErrors.length) return false;
  if (!plan) return force;
  return plan.ok || force;
}
