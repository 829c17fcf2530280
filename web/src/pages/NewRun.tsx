// /runs/new: the form, a pasted YAML, and the live plan beside it.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox } from '../components/ui';
import { PlanPanel } from '../components/PlanPanel';
import { navigate } from '../router';
import {
  applyAlternative, canSubmit, debounce, EMPTY_FORM, formToSpec, parseRunYaml, specToForm,
  type FormState,
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
    if (!form.cluster || !form.model || formErrors.length) return;
    askPlan(spec);
  }, [spec]);
  useEffect(() => () => askPlan.cancel(), []);

  const set = (k: keyof FormState) => (e: Event) => {
    const t = e.target as HTMLInputElement;
    setForm({ ...form, [k]: t.type === 'checkbox' ? t.checked : t.value });
  };
  const apply = (a: Alternative) => {
    if (!a.set) return;
    setForm(specToForm(applyAlternative(spec, a.set), form));
  };
  const loadYaml = async () => {
    try {
      setForm(specToForm(await parseRunYaml(yaml), { ...EMPTY_FORM, force: form.force }));
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
      const run = await api.submitRun(form.force ? { ...spec, force: true } : spec);
      navigate(`/runs/${run.id}`);
    } catch (err) {
      setSubmitError(err);
      if (err instanceof ApiError && err.status === 422 && (err.problem as any).plan) setPlan((err.problem as any).plan);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (f: string) => formErrors.find((x) => x.field === f)?.message;
  const ok = canSubmit(formErrors, plan, form.force, busy);

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
                {clusters.map((c) => <option key={c.id} value={c.name}>{c.name} — {c.accelerator.type} × {c.num_slices}</option>)}
              </select>
            </label>
            <label>Dataset
              <select name="dataset" value={form.dataset} onChange={set('dataset')}>
                <option value="">(none: synthetic)</option>
                {datasets.map((d) => <option key={d.id} value={d.name}>{d.name}</option>)}
              </select>
            </label>
            <label>Model
              <select name="model" value={form.model} onChange={set('model')}>
                {models.map((m) => <option key={m.name} value={m.name}>{m.name}</option>)}
              </select>
            </label>
            <label>Workload
              <select name="workload" value={form.workload} onChange={set('workload')}>
                <option value="maxtext">maxtext</option><option value="reference">reference</option><option value="command">command</option>
              </select>
            </label>
            {form.workload === 'command' && <label>Command <input name="command" value={form.command} onInput={set('command')} /></label>}
          </fieldset>
          <fieldset>
            <legend>Shape</legend>
            <label>Steps <input name="steps" inputMode="numeric" value={form.steps} onInput={set('steps')} aria-invalid={!!fieldError('steps')} />{fieldError('steps') && <small class="bad">{fieldError('steps')}</small>}</label>
            <label>Batch per device <input name="per_device_batch_size" inputMode="decimal" value={form.per_device_batch_size} onInput={set('per_device_batch_size')} /></label>
            <label>Sequence length <input name="max_target_length" inputMode="numeric" value={form.max_target_length} onInput={set('max_target_length')} /></label>
            <label>Slices <input name="num_slices" inputMode="numeric" value={form.num_slices} onInput={set('num_slices')} placeholder="the cluster's" /></label>
            <label>Parallelism <input name="parallelism" value={form.parallelism} onInput={set('parallelism')} placeholder="ici_fsdp=16, ici_tensor=4" />{fieldError('parallelism') && <small class="bad">{fieldError('parallelism')}</small>}</label>
            <label>Config overrides <textarea name="config" rows={4} value={form.config} onInput={set('config')} placeholder={'remat_policy: full\nopt_type: adamw'} />{fieldError('config') && <small class="bad">{fieldError('config')}</small>}</label>
          </fieldset>
          <fieldset>
            <legend>Recovery</legend>
            <label>Checkpoint every <input name="checkpoint_period" inputMode="numeric" value={form.checkpoint_period} onInput={set('checkpoint_period')} placeholder="steps" /></label>
            <label>Restart budget <input name="max_restarts" inputMode="numeric" value={form.max_restarts} onInput={set('max_restarts')} /></label>
            <label>Elastic minimum slices <input name="min_slices" inputMode="numeric" value={form.min_slices} onInput={set('min_slices')} /></label>
            <label>Priority
              <select name="priority" value={form.priority} onChange={set('priority')}><option>low</option><option>medium</option><option>high</option></select>
            </label>
            <label>Tags <input name="tags" value={form.tags} onInput={set('tags')} placeholder="sweep-3, baseline" /></label>
          </fieldset>
          <details>
            <summary>Paste a run YAML</summary>
            <label>Run YAML <textarea name="yaml" rows={8} value={yaml} onInput={(e) => setYaml((e.target as HTMLTextAreaElement).value)} placeholder={'name: my-run\ncluster: demo\n…'} /></label>
            <button type="button" onClick={loadYaml}>Load into the form</button>
            {yamlError && <div class="bad" role="alert">{yamlError}</div>}
          </details>
          <div class="submit-row">
            <label class="force"><input type="checkbox" name="force" checked={form.force} onChange={set('force')} /> Force (submit despite plan errors)</label>
            <button type="submit" class="primary" disabled={!ok}>{busy ? 'Submitting…' : 'Submit run'}</button>
          </div>
          <ErrorBox error={submitError} />
        </form>
        <PlanPanel plan={plan} error={planError} planning={planning} onApply={apply} />
      </div>
    </main>
  );
}
