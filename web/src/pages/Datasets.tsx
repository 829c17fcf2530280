// /datasets: the registered datasets; admins and members register one (the server's errors shown
// by field) and delete their own (admins any).
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, ErrorBox, FieldMessage, Loading, usePoll, useSubmit } from '../components/ui';
import {
  canDeleteDataset, canRegisterDatasets, DATASET_FORMATS, EMPTY_DATASET_FORM, newDatasetBody, uriNote,
  type DatasetForm,
} from '../datasetForm';
import { serverFieldErrors } from '../fields';
import { ago, count } from '../format';
import { useMe } from '../session';
import type { Dataset } from '../types';

export function Datasets() {
  const q = usePoll(() => api.datasets(), [], 0, false);
  const me = useMe();
  const writer = canRegisterDatasets(me);
  const [registering, setRegistering] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const remove = async (d: Dataset) => {
    if (!confirm(`Delete dataset ${d.name}? Only Podium's record goes; the data at ${d.uri} is not touched. Podium refuses while runs refer to it.`)) return;
    setActionError(null);
    setNote(null);
    try { await api.deleteDataset(d.id); setNote(`Deleted ${d.name}.`); q.reload(); } catch (err) { setActionError(err); }
  };
  const items = q.data?.items ?? [];
  const deletable = items.some((d) => canDeleteDataset(me, d));
  return (
    <main>
      <header class="page-head"><h1>Datasets</h1>
        {writer && !registering && <button type="button" class="primary" onClick={() => { setRegistering(true); setNote(null); }}>Register dataset</button>}
      </header>
      {registering && <RegisterDataset onCancel={() => setRegistering(false)} onRegistered={(d) => { setRegistering(false); setNote(`Registered ${d.name}.`); q.reload(); }} />}
      {note && <p class="good small" role="status">{note}</p>}
      <ErrorBox error={q.error || actionError} />
      {!q.data ? <Loading /> : items.length === 0 ? <Empty>No datasets registered{writer ? <>: press <em>Register dataset</em>, or use</> : '. Admins and members register them with'} <code>POST /api/v1/datasets</code>.</Empty> : (
        <table class="data" data-test="datasets-table">
          <thead><tr><th>Name</th><th>URI</th><th>Format</th><th class="num">Records</th><th class="num">Bytes</th><th class="num">Tokens</th><th>Created</th>{deletable && <th />}</tr></thead>
          <tbody>{items.map((d) => (
            <tr key={d.id} data-dataset={d.name}><td>{d.name}</td><td><code>{d.uri}</code></td><td>{d.format}</td><td class="num">{count(d.records)}</td><td class="num">{count(d.bytes)}</td><td class="num">{count(d.tokens)}</td><td>{ago(d.created_at)}</td>
              {deletable && <td>{canDeleteDataset(me, d) && <button type="button" class="danger small" data-test="delete-dataset" onClick={() => remove(d)}>Delete</button>}</td>}</tr>
          ))}</tbody>
        </table>
      )}
    </main>
  );
}

function RegisterDataset({ onCancel, onRegistered }: { onCancel: () => void; onRegistered: (d: Dataset) => void }) {
  const me = useMe();
  const [form, setForm] = useState<DatasetForm>(EMPTY_DATASET_FORM);
  const { body, errors } = useMemo(() => newDatasetBody(form), [form]);
  const { busy, error, submit } = useSubmit(() => api.createDataset(body), onRegistered, errors.length > 0);
  const shown = [...errors, ...serverFieldErrors(error)];
  const set = (k: keyof DatasetForm) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  const note = uriNote(form, me);
  return (
    <form class="run-form cluster-form" onSubmit={submit} aria-label="Register dataset" data-test="dataset-form">
      <fieldset>
        <legend>Register dataset</legend>
        <label>Name <input name="name" value={form.name} onInput={set('name')} placeholder="c4-en" /><FieldMessage errors={shown} field="name" /></label>
        <label>Format
          <select name="format" value={form.format} onChange={set('format')}>{DATASET_FORMATS.map((f) => <option key={f} value={f}>{f}</option>)}</select>
          <FieldMessage errors={shown} field="format" />
        </label>
        <label class="wide">URI <input name="uri" value={form.uri} onInput={set('uri')} placeholder="gs://bucket/c4/en/ or file:///data/train.jsonl" /><FieldMessage errors={shown} field="uri" />
          {note && <small class="muted" data-test="uri-note">{note}</small>}
        </label>
        <label>Records <input name="records" inputMode="numeric" value={form.records} onInput={set('records')} placeholder="unknown" /><FieldMessage errors={shown} field="records" /></label>
        <label>Bytes <input name="bytes" inputMode="numeric" value={form.bytes} onInput={set('bytes')} placeholder="unknown" /><FieldMessage errors={shown} field="bytes" /></label>
        <label>Tokens <input name="tokens" inputMode="numeric" value={form.tokens} onInput={set('tokens')} placeholder="unknown" /><FieldMessage errors={shown} field="tokens" /></label>
        <label>Tokens per record <input name="tokens_per_record" inputMode="decimal" value={form.tokens_per_record} onInput={set('tokens_per_record')} placeholder="unknown" /><FieldMessage errors={shown} field="tokens_per_record" /></label>
      </fieldset>
      <p class="muted small">The planner tells how long the data lasts from its tokens, else records × tokens per record, else bytes (4 a token): give what you know, <code>1,000,000</code> is fine. A <code>synthetic</code> dataset never runs out.</p>
      <div class="submit-row">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" class="primary" disabled={busy || errors.length > 0}>{busy ? 'Registering…' : 'Register'}</button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}
