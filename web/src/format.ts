// Number and time formatting shared by every page (and the CSV/Markdown exports).

/** Significant digits that suit a dashboard cell: 3 below 100, one decimal from 100 up. */
export function num(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e6) return v.toLocaleString('en-US', { maximumFractionDigits: 0 });
  if (a >= 100) return (Math.round(v * 10) / 10).toLocaleString('en-US', { maximumFractionDigits: 1 });
  return Number(v.toPrecision(digits)).toString();
}

export function pct(v: number | null | undefined, digits = 1): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return `${(v * 100).toFixed(digits)}%`;
}

export function ratio(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return `${v >= 10 ? v.toFixed(1) : v.toFixed(2)}×`;
}

export function gib(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return `${v.toFixed(v >= 100 ? 0 : 1)} GiB`;
}

export function seconds(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (v < 1) return `${(v * 1000).toFixed(v < 0.01 ? 2 : 0)} ms`;
  if (v < 120) return `${v.toFixed(v < 10 ? 2 : 1)} s`;
  return duration(v);
}

/** 3725 → "1h 2m 5s". */
export function duration(totalSeconds: number): string {
  if (!Number.isFinite(totalSeconds) || totalSeconds < 0) return '–';
  const s = Math.round(totalSeconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return `${h}h ${m}m ${r}s`;
  if (m) return `${m}m ${r}s`;
  return `${r}s`;
}

export function money(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return `$${v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2)}`;
}

export function count(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return Math.round(v).toLocaleString('en-US');
}

/** "3m ago" from an RFC 3339 time, against `now` (injected in tests). */
export function ago(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '–';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '–';
  const s = Math.max(0, (now - t) / 1000);
  if (s < 60) return `${Math.floor(s)}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

export function progress(lastStep: number | null | undefined, steps: number | null | undefined): string {
  if (!steps) return lastStep === null || lastStep === undefined ? '–' : `${lastStep}`;
  const done = lastStep === null || lastStep === undefined ? 0 : lastStep + 1;
  return `${Math.min(done, steps)} / ${steps}`;
}

// "agents", "Slurm (partition a3mega)", "Kubernetes (gke_..., queue multislice-queue)".
export function executorLabel(c: { executor?: { kind: string; [key: string]: unknown } }): string {
  const e = c.executor;
  if (!e || e.kind === 'agent') return 'runs on Podium agents';
  const part = (k: string, label: string) => (typeof e[k] === 'string' && e[k] ? `${label} ${e[k] as string}` : '');
  if (e.kind === 'slurm') {
    const details = [part('partition', 'partition'), part('account', 'account'), part('qos', 'qos')].filter(Boolean).join(', ');
    return `runs through Slurm${details ? ` (${details})` : ''}`;
  }
  const details = [part('context', 'context'), part('namespace', 'namespace'), part('queue', 'queue')].filter(Boolean).join(', ');
  return `runs through Kubernetes JobSets${details ? ` (${details})` : ''}`;
}
