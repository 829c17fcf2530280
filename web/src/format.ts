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

/**
 * How a ratio to a baseline reads. 'speed': the figure is a duration (step time), so a ratio
 * below 1 is a speed-up and reads "29.5× faster" (not "0.03×"), one above 1 "2.0× slower".
 * 'plain': any other figure, "60×", "0.50×".
 */
export type RatioReading = 'speed' | 'plain';

/**
 * A ratio's magnitude with at least two significant digits, so that 25 and 40 never read alike:
 * three significant digits with trailing zeros dropped down to two (29.5, 60, 2.0, 0.50, 0.0339),
 * whole numbers from 100 (1234), and two significant digits in scientific form below 0.001 or from
 * 1e6 (1.2e-4, 2.5e6). The CLI's format_ratio (engine/cli/ratio_text.h) follows the same rules.
 */
export function ratioDigits(m: number): string {
  if (m >= 100 && Math.round(m) < 1e6) return String(Math.round(m));
  if (m >= 100 || m < 1e-3) {
    const [mantissa, exponent] = m.toExponential(1).split('e');
    return `${mantissa}e${Number(exponent)}`;
  }
  let text = m.toPrecision(3);
  if (!text.includes('.')) return text;
  const significant = (t: string) => t.replace('.', '').replace(/^0+/, '').length;
  while (text.endsWith('0') && significant(text) > 2) text = text.slice(0, -1);
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

/**
 * The text of a ratio to the baseline on the compare page and in its CSV and Markdown exports:
 * "29.5× faster", "2.0× slower", "1.0×" (speed); "60×", "0.50×", "0×" (plain). '–' when there is
 * no ratio (missing, not finite, negative; a zero duration, which no speed-up describes).
 */
export function ratioText(r: number | null | undefined, reading: RatioReading = 'plain'): string {
  if (r === null || r === undefined || !Number.isFinite(r) || r < 0) return '–';
  if (reading === 'plain') return r === 0 ? '0×' : `${ratioDigits(r)}×`;
  if (r === 0) return '–';
  const digits = ratioDigits(r < 1 ? 1 / r : r);
  if (digits === '1.0') return '1.0×';
  return `${digits}× ${r < 1 ? 'faster' : 'slower'}`;
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
