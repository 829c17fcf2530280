// /runs/new: the form, a pasted YAML, and the live plan beside it.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox } from '../components/ui';
import { PlanPanel } from '../components/PlanPanel';
import { navigate } from '../router';
import {
  applyAlternative, BLANK_FORM, canSubmit, debounce, EMPTY_FORM, formToSpec, ON_STALL, parseRunYaml, PRIORITIES,
  SKIP_CHECKS, specToForm, type FormState,
} from '../spec';
import type { Alternative, Cluster, Dataset, Model, Plan } from '../types';

export function NewRun() {
  const [form, setForm] = useState<FormState>(EMPTY_FORM);
  const [clusters, setClusters] = useState<Cluster[]>([]);
  const [datasets, setDatasets] = useState<Dataset[]>([]);
  const [models, setModels] = useState<Model[]>([]);
  const [plan, setPlan] = useState<Plan | null>(null);
  const [planError, setPlanError] = useState<unknown>(null);
  const [planning, setPlanning] = useState(false);
  const [yaml, setYaml] = useState('');
  const [yamlError, setYamlError] = useState('');
  const [submitError, setSubmitError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const inflight = useRef<AbortController | null>(null);

  useEffect(() => {
    Promise.all([api.clusters(), api.datasets(), api.models()]).then(([c, d, m]) => {
      setClusters(c.items);
      setDatasets(d.items);
      setModels(m.items);
      setForm((f) => ({
        ...f,
        cluster: f.cluster || c.items[0]?.name || '',
        dataset: f.dataset || d.items[0]?.name || '',
        model: f.model || m.items.find((x) => x.name.startsWith('reference'))?.name || m.items[0]?.name || '',
      }));
    }).catch(setPlanError);
  }, []);

  const { spec, errors: formErrors } = useMemo(() => formToSpec(form), [form]);

  const askPlan = useMemo(() => debounce(async (s: Record<string, unknown>) => {
    inflight.current?.abort();
    const ctl = new AbortController();
    inflight.current = ctl;
    setPlanning(true);
    try {
      const p = await api.plan(s, ctl.signal);
      setPlan(p);
      setPlanError(null);
    } catch (e) {
      if ((e as Error).name === 'AbortError') return;
      setPlan(null);
      setPlanError(e);
    } finally {
      if (inflight.current === ctl) setPlanning(false);
    }
  }, 300), []);

  useEffect(() => {
    if (!form.cluster || (!form.model && form.workload !== 'command') || formErrors.length) return;
    askPlan(spec);
  }, [spec]);
  useEffect(() => () => askPlan.cancel(), []);

  const set = (k: keyof FormState) => (e: Event) => {
    const t = e.target as HTMLInputElement;
    setForm({ ...form, [k]: t.type === 'checkbox' ? t.checked : t.value });
  };
  const toggleSkip = (check: string) => (e: Event) => {
    const on = (e.target as HTMLInputElement).checked;
    setForm({ ...form, skip_checks: on ? [...form.skip_checks.filter((c) => c !== check), check] : form.skip_checks.filter((c) => c !== check) });
  };
  const dropExtra = (k: string) => {
    const { [k]: _, ...rest } = form.extra;
    setForm({ ...form, extra: rest });
  };
  const apply = (a: Alternative) => {
    if (!a.set) return;
    setForm(specToForm(applyAlternative(spec, a.set), form));
  };
  const loadYaml = async () => {
    try {
      // Read onto a blank form: what the YAML leaves out stays out (the server's defaults).
      const pasted = await parseRunYaml(yaml);
      setForm(specToForm(pasted, { ...BLANK_FORM, force: form.force }));
      setYamlError('');
    } catch (e) {
      setYamlError((e as Error).message);
    }
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setSubmitError(null);
    try {
      const run = await api.submitRun(spec);
      navigate(`/runs/${run.id}`);
    } catch (err) {
      setSubmitError(err);
      if (err instanceof ApiError && err.status === 422 && err.problem.plan) setPlan(err.problem.plan);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (f: string) => formErrors.find((x) => x.field === f)?.message;
  const ok = canSubmit(formErrors, plan, form.force, busy);

  const err = (f: string) => fieldError(f) && <small class="bad" data-field-error={f}>{fieldError(f)}</small>;
  // A pasted spec may name what this server does not list: show it rather than another choice.
  const withCurrent = (names: string[], current: string) => (current && !names.includes(current) ? [...names, current] : names);
  const skipChoices = [...SKIP_CHECKS, ...form.skip_checks.filter((c) => !(SKIP_CHECKS as readonly string[]).includes(c))];
  const extraKeys = Object.keys(form.extra);

  return (
    <main class="new-run">
      <header class="page-head"><h1>New run</h1></header>
      <div class="split">
        <form onSubmit={submit} class="run-form" aria-label="Run spec">
          <fieldset>
            <legend>What and where</legend>
            <label>Name <input name="name" value={form.name} onInput={set('name')} required placeholder="llama3-8b-v6e-256" /></label>
            <label>Cluster
              <select name="cluster" value={form.cluster} onChange={set('cluster')}>
                {!form.cluster && <option value="">(choose)</option>}
                {clusters.map((c) => <option key={c.id} value={c.name}>{c.name} — {c.accelerator.type} × {c.num_slices}</option>)}
                {form.cluster && !clusters.some((c) => c.name === form.cluster) && <option value={form.cluster}>{form.cluster} (not on this server)</option>}
              </select>
            </label>
            <label>Dataset
              <select name="dataset" value={form.dataset} onChange={set('dataset')}>
                <option value="">(none: synthetic)</option>
                {withCurrent(datasets.map((d) => d.name), form.dataset).map((d) => <option key={d} value={d}>{d}</option>)}
              </select>
            </label>
            <label>Model
              <select name="model" value={form.model} onChange={set('model')}>
                <option value="">(none)</option>
                {withCurrent(models.map((m) => m.name), form.model).map((m) => <option key={m} value={m}>{m}</option>)}
              </select>
            </label>
            <label>Workload
              <select name="workload" value={form.workload} onChange={set('workload')}>
                <option value="">(not given: maxtext)</option>
                <option value="maxtext">maxtext</option><option value="reference">reference</option><option value="command">command</option>
              </select>
            </label>
            {(form.workload === 'command' || form.command) && <label class="wide">Command <input name="command" value={form.command} onInput={set('command')} placeholder={'a shell line, or an argv: ["python3", "train.py"]'} />{err('command')}</label>}
          </fieldset>
          <fieldset>
            <legend>Shape</legend>
            <label>Steps <input name="steps" inputMode="numeric" value={form.steps} onInput={set('steps')} aria-invalid={!!fieldError('steps')} />{err('steps')}</label>
            <label>Batch per device <input name="per_device_batch_size" inputMode="decimal" value={form.per_device_batch_size} onInput={set('per_device_batch_size')} />{err('per_device_batch_size')}</label>
            <label>Sequence length <input name="max_target_length" inputMode="numeric" value={form.max_target_length} onInput={set('max_target_length')} />{err('max_target_length')}</label>
            <label>Slices <input name="num_slices" inputMode="numeric" value={form.num_slices} onInput={set('num_slices')} placeholder="the cluster's" />{err('num_slices')}</label>
            <label>Parallelism <input name="parallelism" value={form.parallelism} onInput={set('parallelism')} placeholder="ici_fsdp=16, ici_tensor=4" />{err('parallelism')}</label>
            <label class="wide">Config overrides <textarea name="config" rows={4} value={form.config} onInput={set('config')} placeholder={'remat_policy: full\nopt_type: adamw'} />{err('config')}</label>
          </fieldset>
          <fieldset>
            <legend>Launch</legend>
            <label class="wide">Entrypoint <input name="entrypoint" value={form.entrypoint} onInput={set('entrypoint')} placeholder={'MaxText.train, or ["/opt/train.sh"]'} />{err('entrypoint')}</label>
            <label>Config file <input name="config_file" value={form.config_file} onInput={set('config_file')} placeholder="MaxText/configs/base.yml" /></label>
            <label>Working directory <input name="workdir" value={form.workdir} onInput={set('workdir')} placeholder="/home/team/maxtext" /></label>
            <label>Code bundle <input name="code_bundle" value={form.code_bundle} onInput={set('code_bundle')} placeholder="sha256:… (podium runs submit --code)" /></label>
            <label>Image <input name="image" value={form.image} onInput={set('image')} placeholder="Kubernetes: the cluster's" /></label>
            <label>MaxText version <input name="maxtext_version" value={form.maxtext_version} onInput={set('maxtext_version')} placeholder="auto, fork, 0.2.0, a commit" /></label>
            <label>Fork's mesh axes <input name="maxtext_fork_mesh_axes" value={form.maxtext_fork_mesh_axes} onInput={set('maxtext_fork_mesh_axes')} placeholder="a fork's mesh_axes: data, fsdp, tensor" /></label>
            <label class="wide">Fork's config keys <textarea name="maxtext_fork_keys" rows={2} value={form.maxtext_fork_keys} onInput={set('maxtext_fork_keys')} placeholder="a fork's base.yml keys, one per line: checked exactly" /></label>
            <label class="wide">Environment <textarea name="env" rows={3} value={form.env} onInput={set('env')} placeholder={'LIBTPU_INIT_ARGS=--xla_tpu_scoped_vmem_limit_kib=98304\nJAX_PLATFORMS=tpu'} />{err('env')}</label>
          </fieldset>
          <fieldset>
            <legend>Checks</legend>
            <label>Compile check
              <select name="preflight" value={form.preflight} onChange={set('preflight')}>
                <option value="">(not given: none)</option><option value="compile">compile before placing</option><option value="none">none</option>
              </select>
            </label>
            {(form.preflight === 'compile' || form.compile_cluster) && <label>Compile on cluster <input name="compile_cluster" value={form.compile_cluster} onInput={set('compile_cluster')} placeholder="the run's own" /></label>}
            <div role="group" aria-label="Skip checks" class="checks" data-test="skip-checks">
              Skip
              {skipChoices.map((c) => (
                <label class="check" key={c}><input type="checkbox" name="skip_checks" value={c} checked={form.skip_checks.includes(c)} onChange={toggleSkip(c)} /> {c}</label>
              ))}
            </div>
          </fieldset>
          <fieldset>
            <legend>Recovery</legend>
            <label>Checkpoint every <input name="checkpoint_period" inputMode="numeric" value={form.checkpoint_period} onInput={set('checkpoint_period')} placeholder="steps" />{err('checkpoint_period')}</label>
            <label>Restart budget <input name="max_restarts" inputMode="numeric" value={form.max_restarts} onInput={set('max_restarts')} placeholder="3" />{err('max_restarts')}</label>
            <label>Restart on exit codes <input name="restart_on_exit_codes" value={form.restart_on_exit_codes} onInput={set('restart_on_exit_codes')} placeholder="1, 137" />{err('restart_on_exit_codes')}</label>
            <label>Elastic minimum slices <input name="min_slices" inputMode="numeric" value={form.min_slices} onInput={set('min_slices')} />{err('min_slices')}</label>
            <label>Priority
              <select name="priority" value={form.priority} onChange={set('priority')}>
                <option value="">(not given: medium)</option>
                {PRIORITIES.map((p) => <option key={p} value={p}>{p}</option>)}
              </select>
            </label>
            <label>Tags <input name="tags" value={form.tags} onInput={set('tags')} placeholder="sweep-3, baseline" />{err('tags')}</label>
          </fieldset>
          <fieldset>
            <legend>Unattended</legend>
            <label>On a stall
              <select name="on_stall" value={form.on_stall} onChange={set('on_stall')}>
                <option value="">(not given: restart)</option>
                {ON_STALL.map((p) => <option key={p} value={p}>{p}</option>)}
              </select>
            </label>
            <label>Stall after <input name="stall_seconds" inputMode="numeric" value={form.stall_seconds} onInput={set('stall_seconds')} placeholder="seconds without a step" />{err('stall_seconds')}</label>
            <label>Recovery bound <input name="max_recoveries" inputMode="numeric" value={form.max_recoveries} onInput={set('max_recoveries')} placeholder="unbounded" />{err('max_recoveries')}</label>
            <label>Start from run <input name="init_from_run" value={form.init_from_run} onInput={set('init_from_run')} placeholder="run id or name" />{err('init_from.run')}</label>
            <label>at step <input name="init_from_step" inputMode="numeric" value={form.init_from_step} onInput={set('init_from_step')} />{err('init_from.step')}</label>
            <label>Keep last checkpoints <input name="keep_last" inputMode="numeric" value={form.keep_last} onInput={set('keep_last')} placeholder="the cluster's" />{err('checkpoint_retention.keep_last')}</label>
            <label>and every <input name="keep_every" inputMode="numeric" value={form.keep_every} onInput={set('keep_every')} placeholder="steps" />{err('checkpoint_retention.keep_every')}</label>
            <label>Project <input name="project" value={form.project} onInput={set('project')} />{err('project')}</label>
            <label class="wide">Notes <textarea name="notes" rows={2} value={form.notes} onInput={set('notes')} /></label>
          </fieldset>
          {extraKeys.length > 0 && (
            <div class="notice" data-test="extra-fields">
              Also sent as pasted (no control for them here):
              <ul>{extraKeys.map((k) => <li key={k}><code>{k}: {JSON.stringify(form.extra[k])}</code> <button type="button" onClick={() => dropExtra(k)}>Remove</button></li>)}</ul>
            </div>
          )}
          <details>
            <summary>Paste a run YAML</summary>
            <label>Run YAML <textarea name="yaml" rows={8} value={yaml} onInput={(e) => setYaml((e.target as HTMLTextAreaElement).value)} placeholder={'name: my-run\ncluster: demo\n…'} /></label>
            <button type="button" onClick={loadYaml}>Load into the form</button>
            {yamlError && <div class="bad" role="alert">{yamlError}</div>}
          </details>
          <div class="submit-row">
            <label class="force"><input type="checkbox" name="force" checked={form.force} onChange={set('force')} /> Force (skip every check, submit despite plan errors)</label>
            <button type="submit" class="primary" disabled={!ok}>{busy ? 'Submitting…' : 'Submit run'}</button>
          </div>
          <ErrorBox error={submitError} />
        </form>
        <PlanPanel plan={plan} error={planError} planning={planning} onApply={apply} />
      </div>
    </main>
  );
}
