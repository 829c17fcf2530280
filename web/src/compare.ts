// The compare view's numbers: ratios to the baseline, which direction is better, and exports.
import { ratioText, type RatioReading } from './format';
import type { CompareRow } from './types';

export interface Metric {
  key: keyof CompareRow & string;
  label: string;
  /** true when a larger value is better (throughput), false when smaller is (time, cost). */
  higherIsBetter: boolean | null;
  /** How its ratio to the baseline reads (format.ts ratioText): a duration's as a speed. */
  reading: RatioReading;
}

export const METRICS: Metric[] = [
  { key: 'step_seconds', label: 'Step time (s)', higherIsBetter: false, reading: 'speed' },
  { key: 'tflops_per_device', label: 'TFLOP/s/device', higherIsBetter: true, reading: 'plain' },
  { key: 'tokens_per_second_per_device', label: 'Tokens/s/device', higherIsBetter: true, reading: 'plain' },
  { key: 'mfu', label: 'MFU', higherIsBetter: true, reading: 'plain' },
  { key: 'hbm_gib_used', label: 'HBM (GiB)', higherIsBetter: null, reading: 'plain' },
  { key: 'goodput', label: 'Goodput', higherIsBetter: true, reading: 'plain' },
  { key: 'cost_per_billion_tokens', label: 'Cost per 1B tokens ($)', higherIsBetter: false, reading: 'plain' },
];

/** A metric's ratio to the baseline as the page and the exports show it ("29.5× faster"). */
export function metricRatioText(metric: Metric, r: number | null): string {
  return ratioText(r, metric.reading);
}

export function rowId(r: CompareRow): string { return r.run_id; }

/** value / baseline value; null when either is missing or the baseline is 0. */
export function ratioOf(row: CompareRow, baseline: CompareRow, key: keyof CompareRow): number | null {
  const v = row[key];
  const b = baseline[key];
  if (typeof v !== 'number' || typeof b !== 'number' || !Number.isFinite(v) || !Number.isFinite(b) || b === 0) return null;
  return v / b;
}

/** "better", "worse" or "same" relative to the baseline for colouring a ratio cell. */
export function verdict(metric: Metric, r: number | null): 'better' | 'worse' | 'same' | 'none' {
  if (r === null || metric.higherIsBetter === null) return 'none';
  if (Math.abs(r - 1) < 0.005) return 'same';
  return (r > 1) === metric.higherIsBetter ? 'better' : 'worse';
}

export function topologyLabel(r: CompareRow): string {
  const acc = r.accelerator ?? '?';
  return r.topology ? `${acc} (${r.topology})` : acc;
}

// Exports carry plain numbers (no thousands separators, 6 significant digits) so spreadsheets
// and Markdown readers parse them; ratios read as on the page ("29.5× faster", "60×").
function cell(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(Number(v.toPrecision(6))) : '';
  if (v === null || v === undefined) return '';
  return String(v);
}

function csvField(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const FIXED: { key: keyof CompareRow & string; label: string }[] = [
  { key: 'name', label: 'Run' },
  { key: 'accelerator', label: 'Accelerator' },
  { key: 'topology', label: 'Topology' },
  { key: 'chips', label: 'Chips' },
  { key: 'per_device_batch_size', label: 'Batch/device' },
  { key: 'max_target_length', label: 'Sequence' },
];

function table(rows: CompareRow[], baseline: CompareRow): string[][] {
  const header = [...FIXED.map((f) => f.label)];
  for (const m of METRICS) header.push(m.label, `${m.label} vs baseline`);
  const out = [header];
  for (const r of rows) {
    const line = FIXED.map((f) => cell(r[f.key]));
    for (const m of METRICS) {
      const rr = ratioOf(r, baseline, m.key);
      line.push(cell(r[m.key]), rr === null ? '' : metricRatioText(m, rr));
    }
    out.push(line);
  }
  return out;
}

export function toCsv(rows: CompareRow[], baseline: CompareRow): string {
  return table(rows, baseline).map((l) => l.map(csvField).join(',')).join('\n') + '\n';
}

export function toMarkdown(rows: CompareRow[], baseline: CompareRow): string {
  const t = table(rows, baseline);
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [`| ${t[0].map(esc).join(' | ')} |`, `|${t[0].map(() => '---').join('|')}|`];
  for (const l of t.slice(1)) lines.push(`| ${l.map(esc).join(' | ')} |`);
  return lines.join('\n') + '\n';
}

/** Keys whose values differ across the configs (flattened one level: config.x, parallelism.y). */
export function configDiff(configs: Record<string, unknown>[]): { key: string; values: string[] }[] {
  const flat = configs.map((c) => flatten(c));
  const keys = new Set<string>();
  for (const f of flat) for (const k of Object.keys(f)) keys.add(k);
  const out: { key: string; values: string[] }[] = [];
  for (const k of [...keys].sort()) {
    const values = flat.map((f) => (k in f ? f[k] : '–'));
    if (new Set(values).size > 1) out.push({ key: k, values });
  }
  return out;
}

function flatten(o: Record<string, unknown>, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o ?? {})) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, flatten(v as Record<string, unknown>, key));
    else out[key] = JSON.stringify(v);
  }
  return out;
}
