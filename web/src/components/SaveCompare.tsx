// Saved compare views: "Save view" on the compare page stores its runs and baseline under a name
// (POST /compares) and goes to the view's stable URL, /compare/{id}, which reloads the same table.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { navigate } from '../router';
import { useMe } from '../session';
import { ErrorBox } from './ui';
import type { SavedCompare } from '../types';

export function SaveCompare({ runs, baseline, saved }: { runs: string[]; baseline: string; saved?: SavedCompare }) {
  const me = useMe();
  const [name, setName] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Viewers read saved views; saving one is a write (admins and members).
  if (!me || me.role === 'viewer' || runs.length < 2) return null;
  // A saved view shown as saved: nothing new to save.
  if (saved && saved.baseline === baseline && saved.runs.join(',') === runs.join(',')) return null;
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      const s = await api.saveCompare({ name: (name ?? '').trim(), runs, baseline });
      navigate(`/compare/${encodeURIComponent(s.id)}`);
    } catch (err) { setError(err); }
  };
  return (
    <div class="save-compare">
      {name === null ? <button type="button" data-test="save-compare" onClick={() => setName('')}>Save view</button> : (
        <form class="inline" onSubmit={save} aria-label="Save view">
          <input name="compare-name" aria-label="view name" placeholder="v5p vs tpu7x" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          <button type="submit" class="primary small" disabled={!name.trim()}>Save</button>
          <button type="button" class="small" onClick={() => setName(null)}>Cancel</button>
        </form>
      )}
      <ErrorBox error={error} />
    </div>
  );
}

/** The search a saved view stands for: its runs and baseline, as /compare?runs=&baseline= takes them. */
export function savedSearch(s: SavedCompare): URLSearchParams {
  const p = new URLSearchParams();
  p.set('runs', s.runs.join(','));
  p.set('baseline', s.baseline);
  return p;
}
