// The new-run form's state, the run spec it stands for, and the plan's one-click alternatives.
export interface FormState {
  name: string;
  cluster: string;
  dataset: string;
  model: string;
  workload: 'maxtext' | 'reference' | 'command';
  command: string;
  steps: string;
  per_device_batch_size: string;
  max_target_length: string;
  num_slices: string;
  /** "ici_fsdp=16, ici_tensor=4" */
  parallelism: string;
  /** one "key: value" per line */
  config: string;
  checkpoint_period: string;
  max_restarts: string;
  min_slices: string;
  priority: 'low' | 'medium' | 'high';
  tags: string;
  force: boolean;
}

export const EMPTY_FORM: FormState = {
  name: '', cluster: '', dataset: '', model: '', workload: 'reference', command: '',
  steps: '100', per_device_batch_size: '1', max_target_length: '128', num_slices: '',
  parallelism: '', config: '', checkpoint_period: '', max_restarts: '3', min_slices: '',
  priority: 'medium', tags: '', force: false,
};

export interface FieldError { field: string; message: string }

function scalar(text: string): unknown {
  const t = text.trim();
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t !== '' && /^-?\d+(\.\d+)?(e-?\d+)?$/i.test(t)) return Number(t);
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t;
}

/** "ici_fsdp=16, ici_tensor=4" or one per line → {ici_fsdp:16, ici_tensor:4}. */
export function parseParallelism(text: string, errors: FieldError[] = []): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(/[,\n]/)) {
    const p = part.trim();
    if (!p) continue;
    const m = /^([a-z_]+)\s*[=:]\s*(-?\d+)$/.exec(p);
    if (!m) { errors.push({ field: 'parallelism', message: `"${p}" is not axis=integer` }); continue; }
    out[m[1]] = Number(m[2]);
  }
  return out;
}

export function formatParallelism(p: Record<string, unknown> | undefined): string {
  return Object.entries(p ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
}

export function parseConfig(text: string, errors: FieldError[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_.]*)\s*[:=]\s*(.*)$/.exec(line);
    if (!m) { errors.push({ field: 'config', message: `"${line}" is not key: value` }); continue; }
    out[m[1]] = scalar(m[2]);
  }
  return out;
}

export function formatConfig(c: Record<string, unknown> | undefined): string {
  return Object.entries(c ?? {}).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('\n');
}

function intField(v: string, field: string, errors: FieldError[], min = 0): number | undefined {
  if (v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) { errors.push({ field, message: `must be an integer ≥ ${min}` }); return undefined; }
  return n;
}

/** The run spec the form stands for, and what in the form cannot be read. */
export function formToSpec(f: FormState): { spec: Record<string, unknown>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const spec: Record<string, unknown> = {
    name: f.name.trim() || 'untitled',
    cluster: f.cluster,
    model: f.model,
    workload: f.workload,
    priority: f.priority,
  };
  if (f.dataset) spec.dataset = f.dataset;
  if (f.workload === 'command') {
    spec.command = f.command.trim().split(/\s+/).filter(Boolean);
  }
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
  const ckpt = intField(f.checkpoint_period, 'checkpoint_period', errors, 1);
  if (ckpt !== undefined) spec.checkpoint_period = ckpt;
  const restarts = intField(f.max_restarts, 'max_restarts', errors, 0);
  if (restarts !== undefined) spec.max_restarts = restarts;
  const minSlices = intField(f.min_slices, 'min_slices', errors, 1);
  if (minSlices !== undefined) spec.min_slices = minSlices;
  const tags = f.tags.split(',').map((t) => t.trim()).filter(Boolean);
  if (tags.length) spec.tags = tags;
  return { spec, errors };
}

/** The form that shows a spec (a pasted YAML, an alternative applied, a run cloned). */
export function specToForm(spec: Record<string, any>, base: FormState = EMPTY_FORM): FormState {
  const str = (v: unknown, d: string) => (v === undefined || v === null ? d : String(v));
  return {
    ...base,
    name: str(spec.name, base.name),
    cluster: str(spec.cluster, base.cluster),
    dataset: str(spec.dataset, base.dataset),
    model: str(spec.model, base.model),
    workload: (spec.workload ?? base.workload) as FormState['workload'],
    command: Array.isArray(spec.command) ? spec.command.join(' ') : base.command,
    steps: str(spec.steps, base.steps),
    per_device_batch_size: str(spec.per_device_batch_size, base.per_device_batch_size),
    max_target_length: str(spec.max_target_length, base.max_target_length),
    num_slices: str(spec.num_slices, base.num_slices),
    parallelism: spec.parallelism !== undefined ? formatParallelism(spec.parallelism) : base.parallelism,
    config: spec.config !== undefined ? formatConfig(spec.config) : base.config,
    checkpoint_period: str(spec.checkpoint_period, base.checkpoint_period),
    max_restarts: str(spec.max_restarts, base.max_restarts),
    min_slices: str(spec.min_slices, base.min_slices),
    priority: (spec.priority ?? base.priority) as FormState['priority'],
    tags: Array.isArray(spec.tags) ? spec.tags.join(', ') : base.tags,
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
