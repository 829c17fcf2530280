// Small shared pieces: state badges, error and empty states, copy buttons, polling.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';

export function StateBadge({ state, failure }: { state: string; failure?: string | null }) {
  return (
    <span class={`badge state-${state}`} title={failure ? `${state}: ${failure}` : state}>
      {state}{failure ? ` · ${failure}` : ''}
    </span>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as ApiError;
  const fields = e instanceof ApiError ? e.problem.errors ?? [] : [];
  return (
    <div class="error-box" role="alert">
      <strong>{e instanceof ApiError && e.status ? `${e.status} ${e.problem.title ?? ''}` : 'Error'}</strong>
      <div>{e.message}</div>
      {fields.length > 0 && <ul>{fields.map((f) => <li key={f.field}><code>{f.field}</code>: {f.message}</li>)}</ul>}
    </div>
  );
}

/** The form's own complaints about one field, beside it. */
export function FieldMessage({ errors, field }: { errors: { field: string; message: string }[]; field: string }) {
  const mine = errors.filter((e) => e.field === field);
  return mine.length ? <small class="bad">{mine.map((e) => e.message).join('; ')}</small> : null;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Loading() {
  return <div class="loading" aria-live="polite">Loading…</div>;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button type="button" class="small" onClick={async () => {
      try { await navigator.clipboard.writeText(text); setDone(true); setTimeout(() => setDone(false), 1500); } catch { setDone(false); }
    }}>{done ? 'Copied' : label}</button>
  );
}

/** Loads once and again every `everyMs` while `live`; keeps the last good value on errors. */
export function usePoll<T>(load: () => Promise<T>, deps: unknown[], everyMs: number, live = true) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const d = await loadRef.current();
        if (!stopped) { setData(d); setError(null); }
      } catch (e) {
        if (!stopped) setError(e);
      }
      if (!stopped && live && everyMs > 0) timer = setTimeout(run, everyMs);
    };
    run();
    return () => { stopped = true; if (timer) clearTimeout(timer); };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, live, tick]);
  return { data, error, reload: () => setTick((t) => t + 1), setData };
}

/**
 * A form's submit: nothing while the form has its own errors (`blocked`); otherwise one request
 * at a time (`busy`), its answer handed to `done`, a refusal kept in `error` for the page to show.
 */
export function useSubmit<T>(send: () => Promise<T>, done: (answer: T) => void, blocked: boolean) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (blocked) return;
    setBusy(true);
    setError(null);
    try {
      done(await send());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}
