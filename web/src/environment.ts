// What an attempt ran with (AttemptEnvironment: versions its ranks reported, the code and the
// image), shown on the run page and compared across runs on /compare.
import type { AttemptEnvironment } from './types';

const LABELS: [keyof AttemptEnvironment, string][] = [
  ['python', 'Python'], ['jax', 'jax'], ['jaxlib', 'jaxlib'], ['libtpu', 'libtpu'], ['maxtext', 'MaxText'],
  ['maxtext_commit', 'MaxText commit'], ['git_commit', 'git commit'], ['code_digest', 'code'], ['image', 'image'],
];

/** The known parts, in a fixed order, for display ("jax 0.10.2"); commits and digests shortened. */
export function environmentEntries(env: AttemptEnvironment | null | undefined): { key: string; label: string; value: string }[] {
  if (!env) return [];
  const out: { key: string; label: string; value: string }[] = [];
  for (const [key, label] of LABELS) {
    const v = env[key];
    if (typeof v !== 'string' || v === '') continue;
    out.push({ key, label, value: key.endsWith('commit') || key === 'code_digest' ? shortDigest(v) : v });
  }
  return out;
}

/** "sha256:0123456789ab…" → "sha256:0123456789ab"; a 40-digit commit → its first 12 digits. */
export function shortDigest(v: string): string {
  const [algo, hex] = v.includes(':') ? v.split(':', 2) : ['', v];
  const short = hex.length > 12 ? hex.slice(0, 12) : hex;
  return algo ? `${algo}:${short}` : short;
}

/** The environment as configuration to diff across runs (full values; null where unknown). */
export function environmentForDiff(env: AttemptEnvironment | null | undefined): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [key] of LABELS) out[key] = env && typeof env[key] === 'string' ? (env[key] as string) : null;
  return out;
}
