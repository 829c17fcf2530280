// /projects: named groups of runs (a run's project), with how many runs each holds; members
// create one. /projects/{name}: its description (edited by its creator or an admin), its runs,
// and delete once it holds none (the server refuses a project with runs: 409).
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, ErrorBox, Loading, StateBadge, usePoll } from '../components/ui';
import { ago } from '../format';
import { navigate } from '../router';
import { useMe } from '../session';
import type { Me, Project } from '../types';

function mayEditProject(me: Me | null, p: Project): boolean {
  return !!me && (me.role === 'admin' || (me.role === 'member' && me.username === p.created_by_name));
}

export function Projects() {
  const q = usePoll(() => api.projects(), [], 0, false);
  const me = useMe();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      const p = await api.createProject({ name: name.trim(), description });
      navigate(`/projects/${encodeURIComponent(p.name)}`);
    } catch (err) { setError(err); }
  };
  const items = q.data?.items ?? [];
  return (
    <main>
      <header class="page-head"><h1>Projects</h1></header>
      {me && me.role !== 'viewer' && (
        <form class="filters" aria-label="New project" onSubmit={create} data-test="project-form">
          <label>Name <input name="name" value={name} placeholder="llama-sweep" onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>
          <label>Description <input name="description" value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} /></label>
          <button type="submit" class="primary" disabled={!name.trim()}>Create project</button>
        </form>
      )}
      <ErrorBox error={q.error || error} />
      {!q.data ? <Loading /> : items.length === 0 ? <Empty>No projects yet. A run joins one with <code>project</code> in its spec or from its page.</Empty> : (
        <table class="data" data-test="projects-table">
          <thead><tr><th>Name</th><th class="num">Runs</th><th>Description</th><th>Created by</th><th>Created</th></tr></thead>
          <tbody>{items.map((p) => (
            <tr key={p.id} data-project={p.name}>
              <td><a href={`/projects/${encodeURIComponent(p.name)}`}>{p.name}</a></td>
              <td class="num"><a href={`/runs?project=${encodeURIComponent(p.name)}`}>{p.runs}</a></td>
              <td class="small">{p.description}</td><td>{p.created_by_name ?? '–'}</td><td title={p.created_at}>{ago(p.created_at)}</td>
            </tr>
          ))}</tbody>
        </table>
      )}
    </main>
  );
}

export function ProjectPage({ name }: { name: string }) {
  const q = usePoll(() => api.project(name), [name], 0, false);
  const runsQ = usePoll(() => api.runs({ project: name, limit: 200 }), [name], 10000, true);
  const me = useMe();
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (q.error && !q.data) return <main><ErrorBox error={q.error} /></main>;
  if (!q.data) return <main><Loading /></main>;
  const p = q.data;
  const editable = mayEditProject(me, p);
  const save = async (e: Event) => {
    e.preventDefault();
    try { q.setData(await api.updateProject(p.name, { description: draft ?? '' })); setDraft(null); setError(null); } catch (err) { setError(err); }
  };
  const remove = async () => {
    if (!confirm(`Delete project ${p.name}?`)) return;
    try { await api.deleteProject(p.name); navigate('/projects'); } catch (err) { setError(err); }
  };
  const runs = runsQ.data?.items ?? [];
  return (
    <main>
      <header class="page-head">
        <div><h1>{p.name}</h1><p class="muted">project · {p.runs} run{p.runs === 1 ? '' : 's'} · created by {p.created_by_name ?? '–'} {ago(p.created_at)}</p></div>
        <div class="actions">
          <a class="button" href={`/runs?project=${encodeURIComponent(p.name)}`}>Open in runs list</a>
          {editable && <button type="button" class="danger" disabled={p.runs > 0} title={p.runs > 0 ? 'move or clear its runs first' : undefined} onClick={remove}>Delete project</button>}
        </div>
      </header>
      <ErrorBox error={error} />
      <section data-test="project-description">
        {draft === null ? (
          <p>{p.description || <span class="muted">No description.</span>} {editable && <button type="button" class="small" onClick={() => setDraft(p.description)}>Edit</button>}</p>
        ) : (
          <form onSubmit={save}>
            <textarea name="description" aria-label="description" rows={3} value={draft} onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)} />
            <div class="actions"><button type="submit" class="small primary">Save</button><button type="button" class="small" onClick={() => setDraft(null)}>Cancel</button></div>
          </form>
        )}
      </section>
      <section>
        <h2>Runs</h2>
        {runs.length === 0 ? <Empty>No runs in this project yet.</Empty> : (
          <table class="data" data-test="project-runs">
            <thead><tr><th>Run</th><th>State</th><th>Accelerator</th><th>Model</th><th>Owner</th><th>Created</th></tr></thead>
            <tbody>{runs.map((r) => (
              <tr key={r.id} data-run-id={r.id}>
                <td><a href={`/runs/${r.id}`}>{r.name}</a>{r.tags.length > 0 && <span class="tags">{r.tags.map((t) => <span class="tag" key={t}>{t}</span>)}</span>}</td>
                <td><StateBadge state={r.state} failure={r.failure_class} /></td><td>{r.accelerator ?? '–'}</td><td>{r.model}</td><td>{r.owner ?? '–'}</td><td title={r.created_at}>{ago(r.created_at)}</td>
              </tr>
            ))}</tbody>
          </table>
        )}
      </section>
    </main>
  );
}
