// /runs: the team's history, filtered and paged by cursor, live states, steady figures.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { count, num, pct, progress, ago } from '../format';
import { navigate } from '../router';
import { Empty, ErrorBox, StateBadge } from '../components/ui';
import { CURATION_FILTERS, CurationFilters } from '../components/CurationFilters';
import { StallBadge } from '../components/StallBadge';
import { FINISHED_STATES, RUN_STATES, type Run, type Summary } from '../types';

const FILTERS = ['state', 'cluster', 'model', 'owner', 'tag', 'q', ...CURATION_FILTERS] as const;
const PAGE = 50;

export function Runs({ search }: { search: URLSearchParams }) {
  const filters: Record<string, string> = {};
  for (const f of FILTERS) filters[f] = search.get(f) ?? '';
  const cursor = search.get('cursor');
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [summaries, setSummaries] = useState<Record<string, Summary | null>>({});
  const known = useRef<Record<string, Summary | null>>({});
  known.current = summaries;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const key = search.toString();

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const page = await api.runs({ ...filters, limit: PAGE, cursor });
        if (stopped) return;
        setRuns(page.items);
        setNext(page.next_cursor);
        setError(null);
        // Steady figures: one summary per visible run that has steps (at most a page).
        // A finished run's summary does not change: asked for once.
        const want = page.items.filter((r) => r.last_step !== null &&
          (!FINISHED_STATES.includes(r.state) || !(r.id in known.current)));
        const results = await Promise.all(want.map((r) => api.summary(r.id).catch(() => null)));
        if (stopped) return;
        setSummaries((old) => {
          const out = { ...old };
          want.forEach((r, i) => { out[r.id] = results[i]; });
          return out;
        });
        const live = page.items.some((r) => !FINISHED_STATES.includes(r.state));
        timer = setTimeout(load, live ? 3000 : 15000);
      } catch (e) {
        if (!stopped) { setError(e); timer = setTimeout(load, 5000); }
      }
    };
    load();
    return () => { stopped = true; if (timer) clearTimeout(timer); };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  const setFilter = (name: string, value: string) => {
    const p = new URLSearchParams(search);
    if (value) p.set(name, value); else p.delete(name);
    p.delete('cursor');
    navigate(`/runs${p.toString() ? `?${p}` : ''}`, true);
  };
  const toggle = (id: string) => {
    const s = new Set(selected);
    if (s.has(id)) s.delete(id); else s.add(id);
    setSelected(s);
  };

  return (
    <main>
      <header class="page-head">
        <h1>Runs</h1>
        <div class="actions">
          <button type="button" disabled={selected.size < 2} onClick={() => navigate(`/compare?runs=${[...selected].join(',')}`)}>Compare {selected.size || ''}</button>
          <a class="button primary" href="/runs/new">New run</a>
        </div>
      </header>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>State
          <select value={filters.state} onChange={(e) => setFilter('state', (e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {RUN_STATES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        {(['cluster', 'model', 'owner', 'tag'] as const).map((f) => (
          <label key={f}>{f[0].toUpperCase() + f.slice(1)}
            <input value={filters[f]} onChange={(e) => setFilter(f, (e.target as HTMLInputElement).value.trim())} />
          </label>
        ))}
        <label>Text <input type="search" value={filters.q} placeholder="name contains…" onChange={(e) => setFilter('q', (e.target as HTMLInputElement).value.trim())} /></label>
        <CurationFilters filters={filters} setFilter={setFilter} />
      </form>
      <ErrorBox error={error} />
      {runs === null ? <div class="loading">Loading…</div> : runs.length === 0 ? (
        <Empty>No runs match. {Object.values(filters).some(Boolean) ? 'Clear the filters, or ' : ''}<a href="/runs/new">submit one</a> or <a href="/import">import a log</a>.</Empty>
      ) : (
        <table class="data" data-test="runs-table">
          <thead>
            <tr>
              <th scope="col"><span class="sr-only">Select</span></th>
              <th scope="col">Run</th><th scope="col">State</th><th scope="col">Cluster</th><th scope="col">Model</th>
              <th scope="col">Owner</th><th scope="col" class="num">Progress</th><th scope="col" class="num">Tokens/s/device</th>
              <th scope="col" class="num">MFU</th><th scope="col" class="num">Restarts</th><th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => {
              const s = summaries[r.id];
              return (
                <tr key={r.id} data-run-id={r.id}>
                  <td><input type="checkbox" aria-label={`select ${r.name}`} checked={selected.has(r.id)} onChange={() => toggle(r.id)} /></td>
                  <td><a href={`/runs/${r.id}`}>{r.name}</a>{r.tags.length > 0 && <span class="tags">{r.tags.map((t) => <span class="tag" key={t}>{t}</span>)}</span>}</td>
                  <td><StateBadge state={r.state} failure={r.failure_class} /><StallBadge run={r} compact />{r.waiting_reason && r.state === 'queued' && <div class="muted small" title={r.waiting_reason}>{r.waiting_reason}</div>}</td>
                  <td>{r.cluster ?? (r.imported ? `${r.accelerator} (imported)` : '–')}</td>
                  <td>{r.model}</td>
                  <td>{r.owner ?? '–'}</td>
                  <td class="num">{progress(r.last_step, r.spec?.steps)}</td>
                  <td class="num">{num(s?.tokens_per_second_per_device)}</td>
                  <td class="num">{pct(s?.mfu)}</td>
                  <td class="num">{count(r.restarts)}{r.recoveries ? ` (+${r.recoveries} rec.)` : ''}</td>
                  <td title={r.created_at}>{ago(r.created_at)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {cursor && <button type="button" onClick={() => window.history.back()}>Newer</button>}
        {next && <button type="button" onClick={() => { const p = new URLSearchParams(search); p.set('cursor', next); navigate(`/runs?${p}`); }}>Older</button>}
      </nav>
    </main>
  );
}
