// /import: a MaxText log (host stdout, kubectl logs, Ray output) becomes a finished run.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox } from '../components/ui';
import { parseConfig } from '../spec';
import { navigate } from '../router';

export function Import() {
  const [name, setName] = useState('');
  const [accelerator, setAccelerator] = useState('');
  const [slices, setSlices] = useState('1');
  const [model, setModel] = useState('');
  const [config, setConfig] = useState('');
  const [log, setLog] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const onFile = async (e: Event) => {
    const f = (e.target as HTMLInputElement).files?.[0];
    if (!f) return;
    setLog(await f.text());
    if (!name) setName(f.name.replace(/\.(log|txt)$/, ''));
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const run = await api.importLog({ name, accelerator, num_slices: Number(slices), model, config: parseConfig(config), log });
      navigate(`/runs/${run.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main>
      <header class="page-head"><h1>Import a log</h1></header>
      <form class="run-form" onSubmit={submit}>
        <label>Name <input name="name" value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>
        <label>Accelerator <input name="accelerator" value={accelerator} required placeholder="v6e-256, tpu7x-2x4x4, a3-mega-8" onInput={(e) => setAccelerator((e.target as HTMLInputElement).value)} /></label>
        <label>Slices <input name="num_slices" inputMode="numeric" value={slices} onInput={(e) => setSlices((e.target as HTMLInputElement).value)} /></label>
        <label>Model <input name="model" value={model} required placeholder="llama3-8b" onInput={(e) => setModel((e.target as HTMLInputElement).value)} /></label>
        <label>Config (key: value per line) <textarea name="config" rows={3} value={config} onInput={(e) => setConfig((e.target as HTMLTextAreaElement).value)} /></label>
        <label>Log file <input type="file" accept=".log,.txt,text/plain" onChange={onFile} /></label>
        <label>Log text <textarea name="log" rows={12} value={log} required onInput={(e) => setLog((e.target as HTMLTextAreaElement).value)} placeholder="paste the MaxText output" /></label>
        <button type="submit" class="primary" disabled={busy}>{busy ? 'Importing…' : 'Import'}</button>
      </form>
      <ErrorBox error={error} />
    </main>
  );
}
