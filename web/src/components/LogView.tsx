// A run's live log: the SSE stream (GET /runs/{id}/logs/stream) with rank filter, search,
// pause and follow. The browser keeps at most MAX_LINES lines.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import type { LogLine, LogStreamState } from '../types';

const MAX_LINES = 5000;

export function LogView({ runId, ranks, onState }: { runId: string; ranks: number[]; onState?: (s: string) => void }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [rank, setRank] = useState<string>('all');
  const [search, setSearch] = useState('');
  const [paused, setPaused] = useState(false);
  const [follow, setFollow] = useState(true);
  const [status, setStatus] = useState('connecting');
  const buffer = useRef<LogLine[]>([]);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const box = useRef<HTMLPreElement>(null);
  const onStateRef = useRef(onState);
  onStateRef.current = onState;

  useEffect(() => {
    setLines([]);
    buffer.current = [];
    const url = api.logStreamUrl(runId, rank === 'all' ? {} : { rank: Number(rank) });
    const es = new EventSource(url, { withCredentials: true });
    let flush: ReturnType<typeof setTimeout> | undefined;
    const schedule = () => {
      if (flush || pausedRef.current) return;
      flush = setTimeout(() => {
        flush = undefined;
        const add = buffer.current;
        buffer.current = [];
        setLines((old) => { const next = old.concat(add); return next.length > MAX_LINES ? next.slice(next.length - MAX_LINES) : next; });
      }, 100);
    };
    es.onopen = () => setStatus('live');
    es.addEventListener('log', (ev) => {
      try { buffer.current.push(JSON.parse((ev as MessageEvent).data) as LogLine); schedule(); } catch { /* a malformed event is skipped */ }
    });
    es.addEventListener('state', (ev) => {
      try { onStateRef.current?.((JSON.parse((ev as MessageEvent).data) as LogStreamState).state); } catch { /* ignored */ }
    });
    es.addEventListener('end', () => { setStatus('ended'); es.close(); schedule(); });
    es.onerror = () => { if (es.readyState === EventSource.CLOSED) setStatus('ended'); else setStatus('reconnecting'); };
    return () => { es.close(); if (flush) clearTimeout(flush); };
  }, [runId, rank]);

  useEffect(() => {
    if (!paused && buffer.current.length) {
      const add = buffer.current;
      buffer.current = [];
      setLines((old) => old.concat(add).slice(-MAX_LINES));
    }
  }, [paused]);

  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    return q ? lines.filter((l) => l.line.toLowerCase().includes(q)) : lines;
  }, [lines, search]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [shown, follow]);

  return (
    <section class="log-view" data-test="log-view" aria-label="Live log">
      <div class="toolbar">
        <label>Rank{' '}
          <select value={rank} onChange={(e) => setRank((e.target as HTMLSelectElement).value)}>
            <option value="all">all</option>
            {ranks.map((r) => <option key={r} value={String(r)}>{r}</option>)}
          </select>
        </label>
        <label>Search <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} placeholder="text in a line" /></label>
        <button type="button" onClick={() => setPaused(!paused)} aria-pressed={paused}>{paused ? 'Resume' : 'Pause'}</button>
        <label><input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow</label>
        <span class={`stream-status ${status}`} aria-live="polite">{status}{paused ? ' (paused)' : ''} · {lines.length} lines</span>
      </div>
      <pre ref={box} class="log-lines" tabIndex={0}>
        {shown.length === 0 ? <span class="muted">{status === 'ended' ? 'No log lines.' : 'Waiting for log lines…'}</span> :
          shown.map((l) => <div key={`${l.attempt}-${l.rank}-${l.seq}`} class="log-line"><span class="log-meta">a{l.attempt} r{l.rank}</span>{l.line}</div>)}
      </pre>
    </section>
  );
}
