// Worker tokens on /clusters/{name}: the command line a host runs to join the cluster with one
// (docs/operations.md, "Running the workers").

/** A word the shell reads back unchanged: as it is when it is safe, else in single quotes. */
export function shellQuote(s: string): string {
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface JoinOptions {
  /** the server's URL as the host reaches it */
  server: string;
  token: string;
  cluster: string;
  slice: number;
  host: number;
  workdir: string;
  /** the unprivileged account the ranks run as */
  runAs: string;
}

export const DEFAULT_WORKDIR = '/var/lib/podium-worker';
export const DEFAULT_RUN_AS = 'podium-train';

/**
 * The agent of one host: server and token in the environment (argv is visible to every local
 * user in `ps`), the host's place in the cluster, its state directory and the ranks' account.
 */
export function joinCommand(o: JoinOptions): string {
  const workdir = o.workdir.trim() ? ` --workdir ${shellQuote(o.workdir.trim())}` : '';
  const runAs = o.runAs.trim() ? ` --run-as ${shellQuote(o.runAs.trim())}` : '';
  return `PODIUM_SERVER=${shellQuote(o.server.replace(/\/+$/, ''))} PODIUM_TOKEN=${shellQuote(o.token)} \\\n`
    + `  podium-worker --cluster ${shellQuote(o.cluster)} --slice ${o.slice} --host ${o.host}${workdir}${runAs}`;
}

/** A slice or host index typed in a field, or the complaint about it. */
export function placeIndex(text: string, count: number, what: 'slice' | 'host'): { value: number; error?: string } {
  const t = text.trim();
  const n = Number(t);
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(n)) return { value: 0, error: `${what} is a whole number from 0` };
  if (n >= count) return { value: n, error: `this cluster has ${count} ${what === 'slice' ? 'slices' : 'hosts per slice'} (0 to ${count - 1})` };
  return { value: n };
}
