// The runs list's curation filters: project, dataset, accelerator and a date range (UTC days),
// all kept in the URL like the others (GET /runs?project=&dataset=&accelerator=&since=&until=).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { Project } from '../types';

export const CURATION_FILTERS = ['project', 'dataset', 'accelerator', 'since', 'until'] as const;

/** A UTC day (YYYY-MM-DD) as the RFC 3339 instant it starts at; '' stays ''. */
export function dayStart(day: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(day) ? `${day}T00:00:00Z` : '';
}

/** The "to" day is inclusive: until is the start of the next day. */
export function dayAfter(day: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return '';
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().replace('.000Z', 'Z');
}

/** The day an RFC 3339 `since` names, or the inclusive last day of an `until`. */
export function dayOf(instant: string, until = false): string {
  const t = Date.parse(instant);
  if (Number.isNaN(t)) return '';
  return new Date(until ? t - 1 : t).toISOString().slice(0, 10);
}

export function CurationFilters({ filters, setFilter }: {
  filters: Record<string, string>; setFilter: (name: string, value: string) => void;
}) {
  const [projects, setProjects] = useState<Project[]>([]);
  useEffect(() => { api.projects().then((p) => setProjects(p.items)).catch(() => setProjects([])); }, []);
  return (
    <>
      <label>Project
        <select name="project" value={filters.project} onChange={(e) => setFilter('project', (e.target as HTMLSelectElement).value)}>
          <option value="">any</option>
          {filters.project && !projects.some((p) => p.name === filters.project) && <option value={filters.project}>{filters.project}</option>}
          {projects.map((p) => <option key={p.id} value={p.name}>{p.name}</option>)}
        </select>
      </label>
      <label>Dataset <input name="dataset" value={filters.dataset} onChange={(e) => setFilter('dataset', (e.target as HTMLInputElement).value.trim())} /></label>
      <label>Accelerator <input name="accelerator" value={filters.accelerator} placeholder="v5p or v5p-128" onChange={(e) => setFilter('accelerator', (e.target as HTMLInputElement).value.trim())} /></label>
      <label>From (UTC) <input type="date" name="since" value={dayOf(filters.since)} onChange={(e) => setFilter('since', dayStart((e.target as HTMLInputElement).value))} /></label>
      <label>To (UTC) <input type="date" name="until" value={dayOf(filters.until, true)} onChange={(e) => setFilter('until', dayAfter((e.target as HTMLInputElement).value))} /></label>
    </>
  );
}
