// A run's curation on its page: notes, tags and project, edited in place by its owner or an admin
// (PATCH /runs/{id}; the server decides, this only hides the buttons from others). The run page
// polls the run: edits live in a draft until saved, so a poll never overwrites what is typed.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { useMe } from '../session';
import { ErrorBox } from './ui';
import type { Me, Project, Run } from '../types';

/** The server's rule for PATCH /runs/{id}: the owner (a member) or an admin. */
export function mayCurate(me: Me | null, run: Run): boolean {
  return !!me && (me.role === 'admin' || (me.role === 'member' && me.username === run.owner));
}

/** Tags typed as "a, b c" (commas or spaces), each once, in order. */
export function parseTags(text: string): string[] {
  const out: string[] = [];
  for (const t of text.split(/[\s,]+/)) if (t && !out.includes(t)) out.push(t);
  return out;
}

export function RunCuration({ run, onSaved }: { run: Run; onSaved: (r: Run) => void }) {
  const me = useMe();
  const editable = mayCurate(me, run);
  return (
    <section class="curation">
      <RunTags run={run} editable={editable} onSaved={onSaved} />
      <RunNotes run={run} editable={editable} onSaved={onSaved} />
    </section>
  );
}

function RunTags({ run, editable, onSaved }: { run: Run; editable: boolean; onSaved: (r: Run) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const save = async (tags: string[]) => {
    setBusy(true);
    try { onSaved(await api.updateRun(run.id, { tags })); setDraft(null); setError(null); } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return (
    <div data-test="run-tags" class="run-tags">
      <span class="label">Tags</span>{' '}
      {run.tags.length === 0 && draft === null && <span class="muted">none</span>}
      {run.tags.map((t) => (
        <span class="tag" key={t} data-tag={t}>{t}{editable && draft === null && (
          <button type="button" class="link small" aria-label={`remove tag ${t}`} disabled={busy}
            onClick={() => save(run.tags.filter((x) => x !== t))}>×</button>
        )}</span>
      ))}
      {' · '}<RunProject run={run} editable={editable} onSaved={onSaved} />
      {editable && draft === null && <button type="button" class="small" onClick={() => setDraft('')}>Add tags</button>}
      {draft !== null && (
        <form class="inline" onSubmit={(e) => { e.preventDefault(); save([...run.tags, ...parseTags(draft).filter((t) => !run.tags.includes(t))]); }}>
          <input name="tags" aria-label="new tags" placeholder="tag, another" value={draft}
            onInput={(e) => setDraft((e.target as HTMLInputElement).value)} />
          <button type="submit" class="small primary" disabled={busy || parseTags(draft).length === 0}>Save tags</button>
          <button type="button" class="small" onClick={() => setDraft(null)}>Cancel</button>
        </form>
      )}
      <ErrorBox error={error} />
    </div>
  );
}

function RunNotes({ run, editable, onSaved }: { run: Run; editable: boolean; onSaved: (r: Run) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try { onSaved(await api.updateRun(run.id, { notes: draft ?? '' })); setDraft(null); setError(null); } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return (
    <div data-test="run-notes" class="run-notes">
      <span class="label">Notes</span>
      {draft === null ? (
        <>
          {run.notes ? <p class="notes-text">{run.notes}</p> : <span class="muted"> none</span>}
          {editable && <button type="button" class="small" onClick={() => setDraft(run.notes)}>{run.notes ? 'Edit notes' : 'Add notes'}</button>}
        </>
      ) : (
        <form onSubmit={(e) => { e.preventDefault(); save(); }}>
          <textarea name="notes" aria-label="notes" rows={5} value={draft} onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)} />
          <div class="actions">
            <button type="submit" class="small primary" disabled={busy}>Save notes</button>
            <button type="button" class="small" onClick={() => setDraft(null)}>Cancel</button>
          </div>
        </form>
      )}
      <ErrorBox error={error} />
    </div>
  );
}

/** The run's project as a link; its editors move it with a select of the projects there are. */
function RunProject({ run, editable, onSaved }: { run: Run; editable: boolean; onSaved: (r: Run) => void }) {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (editable) api.projects().then((p) => setProjects(p.items)).catch(() => setProjects([]));
  }, [editable]);
  const move = async (name: string) => {
    try { onSaved(await api.updateRun(run.id, { project: name || null })); setError(null); } catch (e) { setError(e); }
  };
  return (
    <span data-test="run-project">
      <span class="label">Project</span>{' '}
      {run.project ? <a href={`/projects/${encodeURIComponent(run.project)}`}>{run.project}</a> : <span class="muted">none</span>}
      {editable && projects && projects.length > 0 && (
        <select name="project" aria-label="move to project" value={run.project ?? ''} onChange={(e) => move((e.target as HTMLSelectElement).value)}>
          <option value="">no project</option>
          {projects.map((p) => <option key={p.id} value={p.name}>{p.name}</option>)}
        </select>
      )}
      <ErrorBox error={error} />
    </span>
  );
}
