// /compare?runs=ID,ID&baseline=ID: the table with ratios, bars across topologies, overlaid
// curves, the config diff, CSV and Markdown export.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { Chart } from '../components/Chart';
import { Empty, ErrorBox, Loading } from '../components/ui';
import { environmentForDiff } from '../environment';
import { configDiff, METRICS, metricRatioText, ratioOf, rowId, toCsv, toMarkdown, topologyLabel, verdict } from '../compare';
import { num, pct, ratioText } from '../format';
import { planCheckText } from '../planCheck';
import { navigate } from '../router';
import { SaveCompare, savedSearch } from '../components/SaveCompare';
import type { CompareResult, CompareRow, Metrics, Run, SavedCompare } from '../types';

const COLORS = ['#2f5fd0', '#d1495b', '#3f9d6b', '#b7791f', '#7a5cc4', '#5b8e7d', '#c77d2e', '#a23f8c'];

function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** /compare/{id}: a saved view, shown as the compare page with its runs and baseline. */
export function SavedComparePage({ id }: { id: string }) {
  const [saved, setSaved] = useState<SavedCompare | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => { setSaved(null); api.savedCompare(id).then(setSaved).catch(setError); }, [id]);
  if (error) return <main><ErrorBox error={error} /></main>;
  if (!saved) return <main><Loading /></main>;
  return <Compare search={savedSearch(saved)} saved={saved} />;
}

export function Compare({ search, saved }: { search: URLSearchParams; saved?: SavedCompare }) {
  const ids = (search.get('runs') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const baseline = search.get('baseline') ?? ids[0];
  const [result, setResult] = useState<CompareResult | null>(null);
  const [runs, setRuns] = useState<Run[]>([]);
  const [error, setError] = useState<unknown>(null);
  const key = `${ids.join(',')}|${baseline}`;

  useEffect(() => {
    setResult(null);
    if (ids.length < 2) return;
    api.compare(ids, baseline).then(setResult).catch(setError);
    Promise.all(ids.map((id) => api.run(id))).then(setRuns).catch(setError);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  const go = (nextIds: string[], nextBaseline?: string) => {
    const p = new URLSearchParams();
    p.set('runs', nextIds.join(','));
    if (nextBaseline && nextIds.includes(nextBaseline)) p.set('baseline', nextBaseline);
    navigate(`/compare?${p.toString().replace(/%2C/g, ',')}`);
  };

  return (
    <main class="compare">
      <header class="page-head"><h1>{saved ? <>Compare: <span data-test="saved-compare-name">{saved.name}</span></> : 'Compare'}</h1>
        <SaveCompare runs={ids} baseline={baseline} saved={saved} /></header>
      <RunPicker selected={ids} onChange={(next) => go(next, baseline)} />
      <ErrorBox error={error} />
      {ids.length < 2 ? <Empty>Pick at least two runs (or a model's best run per topology) to compare.</Empty> :
        !result ? <Loading /> : <CompareBody result={result} runs={runs} onBaseline={(b) => go(ids, b)} />}
    </main>
  );
}

function CompareBody({ result, runs, onBaseline }: { result: CompareResult; runs: Run[]; onBaseline: (id: string) => void }) {
  const base = result.rows.find((r) => rowId(r) === result.baseline) ?? result.rows[0];
  const diff = useMemo(() => configDiff(result.rows.map((r) => {
    const run = runs.find((x) => x.id === rowId(r));
    const spec: Partial<Run['spec']> = run?.spec ?? {};
    return { accelerator: r.accelerator, num_slices: r.num_slices, per_device_batch_size: r.per_device_batch_size, max_target_length: r.max_target_length, code_bundle: spec.code_bundle ?? null, parallelism: spec.parallelism ?? {}, config: spec.config ?? {}, environment: environmentForDiff(run?.environment) };
  })), [result, runs]);
  return (
    <>
      <div class="toolbar">
        <button type="button" onClick={() => download('podium-compare.csv', toCsv(result.rows, base), 'text/csv')}>Export CSV</button>
        <button type="button" onClick={() => download('podium-compare.md', toMarkdown(result.rows, base), 'text/markdown')}>Export Markdown</button>
      </div>
      <div class="table-scroll">
        <table class="data" data-test="compare-table">
          <thead>
            <tr><th scope="col">Baseline</th><th scope="col">Run</th><th scope="col">Topology</th><th scope="col" class="num">Chips</th><th scope="col" class="num">Batch × seq</th>
              {METRICS.map((m) => <th key={m.key} scope="col" class="num">{m.label}</th>)}<th scope="col" class="num">Against the plan</th></tr>
          </thead>
          <tbody>
            {result.rows.map((r) => {
              const isBase = rowId(r) === rowId(base);
              return (
                <tr key={rowId(r)} data-run-id={rowId(r)} class={isBase ? 'baseline' : ''}>
                  <td><input type="radio" name="baseline" aria-label={`baseline ${r.name}`} checked={isBase} onChange={() => onBaseline(rowId(r))} /></td>
                  <td><a href={`/runs/${rowId(r)}`}>{r.name}</a></td>
                  <td>{topologyLabel(r)}</td>
                  <td class="num">{num(r.chips)}</td>
                  <td class="num">{num(r.per_device_batch_size)} × {num(r.max_target_length)}</td>
                  {METRICS.map((m) => {
                    const rr = ratioOf(r, base, m.key);
                    const v = r[m.key] as number | null;
                    return (
                      <td key={m.key} class="num" data-metric={m.key} data-ratio={rr ?? ''}>
                        {m.key === 'mfu' || m.key === 'goodput' ? pct(v) : num(v)}
                        {!isBase && rr !== null && <div class={`ratio ${verdict(m, rr)}`}>{metricRatioText(m, rr)}</div>}
                      </td>
                    );
                  })}
                  <td class="num" data-metric="plan_check" data-verdict={r.plan_check?.verdict ?? ''}>
                    {r.plan_check ? <span class={`plan-check ${r.plan_check.verdict}`} title={planCheckText(r.plan_check)}>{ratioText(r.plan_check.ratio)}</span> : '–'}
                    {r.plan_check?.verdict === 'underperforming' && <div class="ratio worse">underperforming: {num(r.plan_check.tflops_per_device)} of {num(r.plan_check.expected_tflops_per_device)} expected</div>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <Bars rows={result.rows} />
      <Curves rows={result.rows} />
      <section>
        <h2>Configuration differences</h2>
        {diff.length === 0 ? <Empty>The runs' configurations are identical.</Empty> : (
          <table class="data compact">
            <thead><tr><th>Key</th>{result.rows.map((r) => <th key={rowId(r)}>{r.name}</th>)}</tr></thead>
            <tbody>{diff.map((d) => <tr key={d.key}><td><code>{d.key}</code></td>{d.values.map((v, i) => <td key={i}><code>{v}</code></td>)}</tr>)}</tbody>
          </table>
        )}
      </section>
    </>
  );
}

function Bars({ rows }: { rows: CompareRow[] }) {
  const metrics = METRICS.filter((m) => rows.some((r) => typeof r[m.key] === 'number'));
  return (
    <section>
      <h2>Across topologies</h2>
      <div class="bar-grid">
        {metrics.map((m) => {
          const max = Math.max(...rows.map((r) => (typeof r[m.key] === 'number' ? (r[m.key] as number) : 0))) || 1;
          return (
            <figure key={m.key} class="bars">
              <figcaption>{m.label}{m.higherIsBetter === false ? ' (lower is better)' : ''}</figcaption>
              {rows.map((r, i) => {
                const v = r[m.key] as number | null;
                return (
                  <div key={rowId(r)} class="bar-row">
                    <span class="bar-label" title={r.name}>{topologyLabel(r)}</span>
                    <span class="bar" style={{ width: `${v ? (v / max) * 100 : 0}%`, background: COLORS[i % COLORS.length] }} />
                    <span class="bar-value">{m.key === 'mfu' || m.key === 'goodput' ? pct(v) : num(v)}</span>
                  </div>
                );
              })}
            </figure>
          );
        })}
      </div>
    </section>
  );
}

function smooth(values: (number | null)[], window: number): (number | null)[] {
  if (window <= 1) return values;
  const out: (number | null)[] = [];
  let sum = 0;
  let n = 0;
  const q: (number | null)[] = [];
  for (const v of values) {
    q.push(v);
    if (v !== null) { sum += v; n++; }
    if (q.length > window) { const old = q.shift()!; if (old !== null) { sum -= old; n--; } }
    out.push(v === null || n === 0 ? null : sum / n);
  }
  return out;
}

function Curves({ rows }: { rows: CompareRow[] }) {
  const [field, setField] = useState('loss');
  const [xMode, setXMode] = useState<'step' | 'time'>('step');
  const [window, setWindow] = useState(1);
  const [data, setData] = useState<Metrics[] | null>(null);
  const ids = rows.map(rowId).join(',');
  useEffect(() => {
    Promise.all(rows.map((r) => api.metrics(rowId(r), { fields: `${field},step_seconds`, max_points: 1000 }))).then(setData).catch(() => setData(null));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ids, field]);
  const aligned = useMemo(() => {
    if (!data) return null;
    // Union of x values; each run's series placed on it (null where it has no point).
    const xsPerRun = data.map((m) => {
      if (xMode === 'step') return m.steps;
      let t = 0;
      return m.steps.map((_, i) => { t += (m.series.step_seconds?.[i] ?? 0) || 0; return Math.round(t * 1000) / 1000; });
    });
    const xs = [...new Set(xsPerRun.flat())].sort((a, b) => a - b);
    const index = new Map(xs.map((x, i) => [x, i]));
    const series = data.map((m, k) => {
      const vals: (number | null)[] = xs.map(() => null);
      xsPerRun[k].forEach((x, i) => { vals[index.get(x)!] = m.series[field]?.[i] ?? null; });
      return { label: rows[k].name, values: smooth(vals, window), color: COLORS[k % COLORS.length] };
    });
    return { xs, series };
  }, [data, xMode, window, field]);
  return (
    <section data-test="compare-curves" data-points={aligned?.xs.length ?? 0}>
      <h2>Curves</h2>
      <div class="toolbar">
        <label>Series <select value={field} onChange={(e) => setField((e.target as HTMLSelectElement).value)}>
          <option value="loss">loss</option><option value="step_seconds">step time</option><option value="tokens_per_second_per_device">tokens/s/device</option><option value="tflops_per_device">TFLOP/s/device</option>
        </select></label>
        <label>x <select value={xMode} onChange={(e) => setXMode((e.target as HTMLSelectElement).value as 'step' | 'time')}><option value="step">step</option><option value="time">training time (s)</option></select></label>
        <label>Smoothing <input type="range" min={1} max={50} value={window} onInput={(e) => setWindow(Number((e.target as HTMLInputElement).value))} /> {window}</label>
      </div>
      {aligned && aligned.xs.length > 0 ? <Chart title={field} x={aligned.xs} series={aligned.series} xLabel={xMode === 'step' ? 'step' : 'seconds'} height={280} /> : <Empty>No step metrics to plot.</Empty>}
    </section>
  );
}

function RunPicker({ selected, onChange }: { selected: string[]; onChange: (ids: string[]) => void }) {
  const [q, setQ] = useState('');
  const [found, setFound] = useState<Run[]>([]);
  const [model, setModel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const t = setTimeout(() => { api.runs({ q, limit: 20 }).then((p) => setFound(p.items)).catch(setError); }, 250);
    return () => clearTimeout(t);
  }, [q]);
  /** The best finished run (highest steady tokens/s/device) of each accelerator for a model. */
  const bestPerTopology = async () => {
    setBusy(true);
    try {
      const page = await api.runs({ model, state: 'succeeded', limit: 200 });
      const summaries = await Promise.all(page.items.map((r) => api.summary(r.id).catch(() => null)));
      const best = new Map<string, { id: string; tps: number }>();
      page.items.forEach((r, i) => {
        const s = summaries[i];
        const tps = s?.tokens_per_second_per_device;
        if (!s || tps === null || tps === undefined) return;
        const topo = `${s.accelerator}×${s.num_slices ?? 1}`;
        if (!best.has(topo) || best.get(topo)!.tps < tps) best.set(topo, { id: r.id, tps });
      });
      onChange([...best.values()].map((b) => b.id).slice(0, 20));
      setError(null);
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return (
    <section class="picker">
      <label>Add runs <input type="search" value={q} placeholder="search by name" onInput={(e) => setQ((e.target as HTMLInputElement).value)} /></label>
      <ul class="found">
        {found.filter((r) => !selected.includes(r.id)).slice(0, 8).map((r) => <li key={r.id}><button type="button" class="small" onClick={() => onChange([...selected, r.id])}>+ {r.name}</button> <span class="muted small">{r.accelerator} · {r.state}</span></li>)}
      </ul>
      {selected.length > 0 && <p>Selected: {selected.map((id) => <span class="tag" key={id}>{id} <button type="button" class="link" aria-label={`remove ${id}`} onClick={() => onChange(selected.filter((x) => x !== id))}>×</button></span>)}</p>}
      <form class="inline" onSubmit={(e) => { e.preventDefault(); bestPerTopology(); }}>
        <label>Model <input value={model} required placeholder="llama3-8b" onInput={(e) => setModel((e.target as HTMLInputElement).value)} /></label>
        <button type="submit" disabled={busy || !model}>Best run per topology</button>
      </form>
      <ErrorBox error={error} />
    </section>
  );
}
