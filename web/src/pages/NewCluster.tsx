// The new-cluster form on /clusters (admins): POST /clusters, then the new cluster's page.
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, FieldMessage, usePoll, useSubmit } from '../components/ui';
import { navigate } from '../router';
import { CAPACITIES, EMPTY_CLUSTER_FORM, newClusterBody, type NewClusterForm } from '../clusterForm';

export function NewClusterForm({ onCancel }: { onCancel: () => void }) {
  const [form, setForm] = useState<NewClusterForm>(EMPTY_CLUSTER_FORM);
  // The server's catalog: every slice type it knows, with what it is in chips, devices and hosts.
  const catalog = usePoll(() => api.accelerators(), [], 0, false);
  const { body, errors } = useMemo(() => newClusterBody(form), [form]);
  const set = (k: keyof NewClusterForm) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });

  const { busy, error, submit } = useSubmit(() => api.createCluster(body),
    (c) => navigate(`/clusters/${encodeURIComponent(c.name)}`), errors.length > 0);

  return (
    <form class="run-form cluster-form" onSubmit={submit} aria-label="New cluster" data-test="cluster-form">
      <fieldset>
        <legend>New cluster</legend>
        <label>Name <input name="name" value={form.name} onInput={set('name')} required maxLength={63} placeholder="v7-train" /></label>
        <label>Accelerator
          <input name="accelerator" value={form.accelerator} onInput={set('accelerator')} required maxLength={64} list="accelerator-examples" placeholder="tpu7x-64, v5p-2x2x2, cpu-2" />
          <datalist id="accelerator-examples" data-test="accelerator-catalog">{(catalog.data?.items ?? []).map((a) => (
            <option key={a.type} value={a.type}>{`${a.topology ? `${a.topology}: ` : ''}${a.chips_per_slice} chips, ${a.devices_per_slice} devices, ${a.hosts_per_slice} hosts`}</option>
          ))}</datalist>
        </label>
        <label>Slices <input name="num_slices" inputMode="numeric" value={form.num_slices} onInput={set('num_slices')} /><FieldMessage errors={errors} field="num_slices" /></label>
        <label>Capacity
          <select name="capacity" value={form.capacity} onChange={set('capacity')}>{CAPACITIES.map((c) => <option key={c}>{c}</option>)}</select>
        </label>
        <label>Zone <input name="zone" value={form.zone} onInput={set('zone')} placeholder="us-central1-c" /></label>
        <label>Price per chip-hour <input name="price_per_chip_hour" inputMode="decimal" value={form.price_per_chip_hour} onInput={set('price_per_chip_hour')} placeholder="none" /><FieldMessage errors={errors} field="price_per_chip_hour" /></label>
        <label>GCP project <input name="project" value={form.project} onInput={set('project')} placeholder="optional" /></label>
        <label>Reservation <input name="reservation" value={form.reservation} onInput={set('reservation')} placeholder="optional" /></label>
        <label>Network <input name="network" value={form.network} onInput={set('network')} placeholder="default" /></label>
        <label class="wide">Labels <textarea name="labels" rows={3} value={form.labels} onInput={set('labels')} placeholder={'team=llm\npool=v7'} /><FieldMessage errors={errors} field="labels" /></label>
      </fieldset>
      <p class="muted small">Runs on Podium agents (<code>podium-worker</code> on every host); a Slurm or Kubernetes executor is set through the API or <code>podium clusters create</code>.</p>
      <div class="submit-row">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" class="primary" disabled={busy || errors.length > 0}>{busy ? 'Creating…' : 'Create cluster'}</button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}
