// /models: the model catalog (built-in and added); admins and members add a model by pasting or
// uploading its MaxText model config, and delete the ones they added (admins any but built-ins).
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, ErrorBox, FieldMessage, Loading, usePoll, useSubmit } from '../components/ui';
import { serverFieldErrors } from '../fields';
import { ago } from '../format';
import {
  canAddModels, canDeleteModel, EMPTY_MODEL_FORM, nameFromFile, newModelBody, paramCount, type ModelForm,
} from '../modelForm';
import { useMe } from '../session';
import type { Model } from '../types';

export function Models() {
  const q = usePoll(() => api.models(), [], 0, false);
  const me = useMe();
  const writer = canAddModels(me);
  const [adding, setAdding] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const remove = async (m: Model) => {
    if (!confirm(`Delete model ${m.name}? Podium refuses while a live run uses it; finished runs keep its name.`)) return;
    setActionError(null);
    setNote(null);
    try { await api.deleteModel(m.name); setNote(`Deleted ${m.name}.`); q.reload(); } catch (err) { setActionError(err); }
  };
  const items = [...(q.data?.items ?? [])].sort((a, b) => Number(a.builtin) - Number(b.builtin) || a.name.localeCompare(b.name));
  const deletable = items.some((m) => canDeleteModel(me, m));
  return (
    <main>
      <header class="page-head"><h1>Models</h1>
        {writer && !adding && <button type="button" class="primary" onClick={() => { setAdding(true); setNote(null); }}>Add model</button>}
      </header>
      {adding && <AddModel onCancel={() => setAdding(false)} onAdded={(m) => { setAdding(false); setNote(`Added ${m.name}: ${paramCount(m.parameters.total)} parameters, ${paramCount(m.active_parameters)} active per token.`); q.reload(); }} />}
      {note && <p class="good small" role="status" data-test="model-note">{note}</p>}
      <ErrorBox error={q.error || actionError} />
      {!q.data ? <Loading /> : items.length === 0 ? <Empty>No models.</Empty> : (
        <table class="data" data-test="models-table">
          <thead><tr><th>Name</th><th>Kind</th><th>Decoder</th><th class="num">Layers</th><th class="num">Parameters</th><th class="num">Active</th><th>MoE</th><th>Description</th><th>Added</th>{deletable && <th />}</tr></thead>
          <tbody>{items.map((m) => (
            <tr key={m.id} data-model={m.name}>
              <td>{m.name}</td><td>{m.builtin ? 'built-in' : 'added'}</td><td>{m.architecture.decoder_block}</td>
              <td class="num">{m.architecture.base_num_decoder_layers}</td>
              <td class="num" data-test="model-params" title={m.parameters.total.toLocaleString('en-US')}>{paramCount(m.parameters.total)}</td>
              <td class="num" title={m.active_parameters.toLocaleString('en-US')}>{paramCount(m.active_parameters)}</td>
              <td>{m.moe ? `${m.architecture.num_experts} × top-${m.architecture.num_experts_per_tok}` : 'no'}</td>
              <td class="small">{m.description}</td><td>{m.builtin ? '–' : ago(m.created_at)}</td>
              {deletable && <td>{canDeleteModel(me, m) && <button type="button" class="danger small" data-test="delete-model" onClick={() => remove(m)}>Delete</button>}</td>}
            </tr>
          ))}</tbody>
        </table>
      )}
    </main>
  );
}

function AddModel({ onCancel, onAdded }: { onCancel: () => void; onAdded: (m: Model) => void }) {
  const [form, setForm] = useState<ModelForm>(EMPTY_MODEL_FORM);
  const [touched, setTouched] = useState(false);
  const { body, errors } = useMemo(() => newModelBody(form), [form]);
  const { busy, error, submit } = useSubmit(() => api.createModel(body), onAdded, errors.length > 0);
  const shown = [...(touched ? errors : []), ...serverFieldErrors(error)];
  const set = (k: keyof ModelForm) => (e: Event) => { setTouched(true); setForm({ ...form, [k]: (e.target as HTMLInputElement).value }); };
  const upload = async (e: Event) => {
    const file = (e.target as HTMLInputElement).files?.[0];
    if (!file) return;
    const text = await file.text();
    setTouched(true);
    setForm((f) => ({ ...f, text, name: f.name || nameFromFile(file.name) }));
  };
  return (
    <form class="run-form cluster-form" onSubmit={(e) => { setTouched(true); submit(e); }} aria-label="Add model" data-test="model-form">
      <fieldset>
        <legend>Add model</legend>
        <label>Name <input name="name" value={form.name} onInput={set('name')} placeholder="almodel-8b-team" /><FieldMessage errors={shown} field="name" /></label>
        <label class="wide">Description <input name="description" value={form.description} onInput={set('description')} placeholder="one line for the catalog" /><FieldMessage errors={shown} field="description" /></label>
        <label class="wide">MaxText model config (YAML, or a JSON object)
          <textarea name="config" rows={16} spellcheck={false} value={form.text} onInput={set('text')}
            placeholder={'base_emb_dim: 2560\nbase_num_query_heads: 20\nbase_num_kv_heads: 20\nbase_mlp_dim: 6656\nbase_num_decoder_layers: 28\nvocab_size: 163840\nnum_experts: 64\nnum_experts_per_tok: 6\n...'} />
          <FieldMessage errors={shown} field="yaml" /><FieldMessage errors={shown} field="config" />
        </label>
        <label>Or upload its file <input type="file" name="file" accept=".yml,.yaml,.json,text/yaml,application/json" onChange={upload} /></label>
      </fieldset>
      <p class="muted small">MaxText's own keys, as in its <code>configs/models/*.yml</code>: sizes (<code>base_emb_dim</code>, <code>base_num_query_heads</code>, <code>base_num_kv_heads</code>, <code>head_dim</code>, <code>base_mlp_dim</code>, <code>base_num_decoder_layers</code>, <code>vocab_size</code>), MoE (<code>num_experts</code>, <code>num_experts_per_tok</code>, <code>shared_experts</code>, <code>base_moe_mlp_dim</code>, <code>first_num_dense_layers</code>), MLA (<code>attention_type: mla</code>, <code>q_lora_rank</code>, <code>kv_lora_rank</code>, …). The planner counts its parameters, FLOPs and memory; a run of it gives the same file as <code>config_file</code>.</p>
      <div class="submit-row">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" class="primary" disabled={busy || (touched && errors.length > 0)}>{busy ? 'Adding…' : 'Add'}</button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}
