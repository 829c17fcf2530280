// A cluster's settings and launch policy on /clusters/{name}: editable by admins (PATCH with only
// what changed), read-only for everyone else; and the admins' Delete button.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, FieldMessage } from '../components/ui';
import { money } from '../format';
import { navigate } from '../router';
import { useMe } from '../session';
import {
  CAPACITIES, canManageClusters, isEmptyPatch, policyOf, policyPatch, policyToForm, POLICY_ROLES,
  rolesText, settingsPatch, settingsToForm, type PolicyForm, type SettingsForm,
} from '../clusterForm';
import type { Cluster, ClusterPatch, LaunchPolicy, PolicyRole } from '../types';

export function ClusterSettings({ cluster, onSaved }: { cluster: Cluster; onSaved: (c: Cluster) => void }) {
  const admin = canManageClusters(useMe());
  return (
    <>
      <section data-test="cluster-settings">
        <h2>Settings</h2>
        {admin ? <SettingsEditor cluster={cluster} onSaved={onSaved} /> : <SettingsView cluster={cluster} />}
      </section>
      <section>
        <h2>Launch policy</h2>
        <p class="muted small">Who may decide what runs on this cluster's hosts: a <code>command</code> workload, any entrypoint, a code-choosing environment variable or an own image is any program.</p>
        <PolicyView policy={policyOf(cluster)} />
        {admin ? <PolicyEditor cluster={cluster} onSaved={onSaved} /> : <p class="muted small">Only admins change the launch policy.</p>}
      </section>
    </>
  );
}

function SettingsView({ cluster: c }: { cluster: Cluster }) {
  const labels = Object.entries(c.labels ?? {});
  return (
    <dl class="facts">
      <dt>Slices</dt><dd>{c.num_slices}</dd>
      <dt>Capacity</dt><dd>{c.capacity}</dd>
      <dt>Zone</dt><dd>{c.zone || '–'}</dd>
      <dt>GCP project</dt><dd>{c.project || '–'}</dd>
      <dt>Reservation</dt><dd>{c.reservation || '–'}</dd>
      <dt>Network</dt><dd>{c.network || 'default'}</dd>
      <dt>Price per chip-hour</dt><dd>{money(c.price_per_chip_hour)}</dd>
      <dt>Labels</dt><dd>{labels.length ? labels.map(([k, v]) => <span key={k} class="tag">{k}={v}</span>) : '–'}</dd>
    </dl>
  );
}

function PolicyView({ policy }: { policy: LaunchPolicy }) {
  return (
    <dl class="facts" data-test="launch-policy">
      <dt>Command workloads, any entrypoint, env, image</dt><dd data-key="command_roles">{rolesText(policy.command_roles)}</dd>
      <dt>Entrypoints everyone may name</dt>
      <dd data-key="entrypoints">{policy.entrypoints.length ? policy.entrypoints.map((e) => <code key={e} class="tag">{e}</code>) : "only the workload's default"}</dd>
      <dt>Code bundles</dt><dd data-key="code_bundle_roles">{rolesText(policy.code_bundle_roles)}</dd>
    </dl>
  );
}

/** A form filled from the cluster, following the server's answers while the user has not edited it. */
function useClusterForm<F>(cluster: Cluster, toForm: (c: Cluster) => F) {
  const [base, setBase] = useState(cluster);
  const [form, setForm] = useState<F>(() => toForm(cluster));
  const dirty = JSON.stringify(form) !== JSON.stringify(toForm(base));
  useEffect(() => {
    if (!dirty) { setBase(cluster); setForm(toForm(cluster)); }
  }, [cluster]);
  const reset = (c: Cluster) => { setBase(c); setForm(toForm(c)); };
  return { base, form, setForm, dirty, reset };
}

/** Saving a PATCH: busy, the server's problem, and a "Saved" note until the next edit. */
function useSave(name: string, onSaved: (c: Cluster) => void, reset: (c: Cluster) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const save = async (patch: ClusterPatch) => {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const updated = await api.updateCluster(name, patch);
      reset(updated);
      onSaved(updated);
      setSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, saved, setSaved, save };
}

function SaveRow({ label, busy, saved, disabled, onRevert }: { label: string; busy: boolean; saved: boolean; disabled: boolean; onRevert?: () => void }) {
  return (
    <div class="submit-row">
      <span>
        {saved && <span class="good small" role="status">Saved.</span>}
        {onRevert && <button type="button" class="link small" onClick={onRevert}>Undo changes</button>}
      </span>
      <button type="submit" class="primary" disabled={disabled || busy}>{busy ? 'Saving…' : label}</button>
    </div>
  );
}

function SettingsEditor({ cluster, onSaved }: { cluster: Cluster; onSaved: (c: Cluster) => void }) {
  const { base, form, setForm, dirty, reset } = useClusterForm<SettingsForm>(cluster, settingsToForm);
  const s = useSave(base.name, onSaved, reset);
  const { patch, errors } = useMemo(() => settingsPatch(form, base), [form, base]);
  const set = (k: keyof SettingsForm) => (e: Event) => {
    setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
    s.setSaved(false);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    if (!errors.length && !isEmptyPatch(patch)) s.save(patch);
  };
  return (
    <form class="run-form" onSubmit={submit} aria-label="Cluster settings">
      <fieldset>
        <legend>{cluster.accelerator.type} · {cluster.executor?.kind ?? 'agent'} executor</legend>
        <label>Slices <input name="num_slices" inputMode="numeric" value={form.num_slices} onInput={set('num_slices')} /><FieldMessage errors={errors} field="num_slices" /></label>
        <label>Capacity
          <select name="capacity" value={form.capacity} onChange={set('capacity')}>{CAPACITIES.map((c) => <option key={c}>{c}</option>)}</select>
        </label>
        <label>Zone <input name="zone" value={form.zone} onInput={set('zone')} /></label>
        <label>GCP project <input name="project" value={form.project} onInput={set('project')} /></label>
        <label>Reservation <input name="reservation" value={form.reservation} onInput={set('reservation')} /></label>
        <label>Network <input name="network" value={form.network} onInput={set('network')} placeholder="default" /></label>
        <label>Price per chip-hour <input name="price_per_chip_hour" inputMode="decimal" value={form.price_per_chip_hour} onInput={set('price_per_chip_hour')} placeholder="none (empty clears it)" /><FieldMessage errors={errors} field="price_per_chip_hour" /></label>
        <label class="wide">Labels (key=value, one a line) <textarea name="labels" rows={3} value={form.labels} onInput={set('labels')} /><FieldMessage errors={errors} field="labels" /></label>
      </fieldset>
      <SaveRow label="Save settings" busy={s.busy} saved={s.saved} disabled={errors.length > 0 || isEmptyPatch(patch)} onRevert={dirty ? () => reset(base) : undefined} />
      <ErrorBox error={s.error} />
    </form>
  );
}

function RoleChecks({ name, legend, value, onChange }: {
  name: string; legend: string; value: Record<PolicyRole, boolean>; onChange: (v: Record<PolicyRole, boolean>) => void;
}) {
  return (
    <div role="group" aria-label={legend} class="checks">
      <span>{legend}</span>
      {POLICY_ROLES.map((r) => (
        <label key={r} class="check">
          <input type="checkbox" name={name} value={r} checked={value[r]} onChange={(e) => onChange({ ...value, [r]: (e.target as HTMLInputElement).checked })} /> {r}
        </label>
      ))}
    </div>
  );
}

function PolicyEditor({ cluster, onSaved }: { cluster: Cluster; onSaved: (c: Cluster) => void }) {
  const toForm = (c: Cluster) => policyToForm(policyOf(c));
  const { base, form, setForm, dirty, reset } = useClusterForm<PolicyForm>(cluster, toForm);
  const s = useSave(base.name, onSaved, reset);
  const { patch, errors } = useMemo(() => policyPatch(form, base), [form, base]);
  const change = (f: PolicyForm) => { setForm(f); s.setSaved(false); };
  const submit = (e: Event) => {
    e.preventDefault();
    if (!errors.length && !isEmptyPatch(patch)) s.save(patch);
  };
  return (
    <form class="run-form" onSubmit={submit} aria-label="Launch policy" data-test="launch-policy-editor">
      <fieldset>
        <legend>Change the policy</legend>
        <RoleChecks name="command_roles" legend="May submit command workloads, name any entrypoint, set any env and pick an image" value={form.command_roles} onChange={(v) => change({ ...form, command_roles: v })} />
        <RoleChecks name="code_bundle_roles" legend="May submit runs carrying a code bundle" value={form.code_bundle_roles} onChange={(v) => change({ ...form, code_bundle_roles: v })} />
        <label class="wide"><span>Entrypoints everyone may name on maxtext/reference runs, one a line (a module like <code>MaxText.train</code> or an absolute path)</span>
          <textarea name="entrypoints" rows={3} value={form.entrypoints} onInput={(e) => change({ ...form, entrypoints: (e.target as HTMLTextAreaElement).value })} placeholder="/opt/maxtext/train.sh" />
          <FieldMessage errors={errors} field="entrypoints" />
        </label>
      </fieldset>
      <SaveRow label="Save launch policy" busy={s.busy} saved={s.saved} disabled={errors.length > 0 || isEmptyPatch(patch)} onRevert={dirty ? () => reset(base) : undefined} />
      <ErrorBox error={s.error} />
    </form>
  );
}

/** Admins only; the server refuses (409) while any run refers to the cluster. */
export function DeleteCluster({ name }: { name: string }) {
  const [error, setError] = useState<unknown>(null);
  if (!canManageClusters(useMe())) return null;
  const remove = async () => {
    if (!confirm(`Delete cluster ${name}? Podium refuses while any run, finished or not, refers to it: delete those runs first. `
      + 'Its registered workers and worker tokens go with it; the machines themselves are not touched (see the teardown commands).')) return;
    setError(null);
    try {
      await api.deleteCluster(name);
      navigate('/clusters');
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div>
      <button type="button" class="danger" onClick={remove} data-test="delete-cluster">Delete cluster</button>
      <ErrorBox error={error} />
    </div>
  );
}
