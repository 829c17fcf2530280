// The "Worker tokens" section of /clusters/{name} (admins): the cluster's tokens as the server
// lists them (who made each, last use, revoked or not), a new one (its secret shown once, with the
// command a host runs to join), revoking one.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, ErrorBox, usePoll } from '../components/ui';
import { canManageClusters } from '../clusterForm';
import { ago } from '../format';
import { useMe } from '../session';
import type { Cluster, WorkerTokenCreated } from '../types';
import { DEFAULT_RUN_AS, DEFAULT_WORKDIR, joinCommand, placeIndex } from '../workerTokens';

export function WorkerTokens({ cluster }: { cluster: Cluster }) {
  // Only admins may list them: the list is fetched by a child that others never mount.
  return canManageClusters(useMe()) ? <WorkerTokensForAdmins cluster={cluster} /> : null;
}

function WorkerTokensForAdmins({ cluster }: { cluster: Cluster }) {
  const list = usePoll(() => api.workerTokens(cluster.name), [cluster.name], 15000);
  const [fresh, setFresh] = useState<WorkerTokenCreated | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      setFresh(await api.createWorkerToken(cluster.name));
      list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (id: string) => {
    if (!confirm(`Revoke worker token ${id}? Hosts can no longer register with it; agents already registered keep their own host credential.`)) return;
    setError(null);
    try {
      await api.revokeWorkerToken(cluster.name, id);
      if (fresh?.id === id) setFresh(null);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const tokens = list.data?.items ?? [];
  return (
    <section data-test="worker-tokens">
      <h2>Worker tokens</h2>
      <p class="muted small">A host joins this cluster by starting <code>podium-worker</code> with a worker token: it may only register this cluster{'\u2019'}s agents, and each agent then gets a credential of its own host. The secret is shown once, when you create it; Podium keeps only its hash.</p>
      <button type="button" class="primary" onClick={create} disabled={busy} data-test="create-worker-token">{busy ? 'Creating…' : 'Create worker token'}</button>
      {fresh && <FreshToken cluster={cluster} token={fresh} />}
      <ErrorBox error={error ?? list.error} />
      {tokens.length > 0 && (
        <table class="data compact" data-test="worker-token-list">
          <thead><tr><th>Id</th><th>Created</th><th>By</th><th>Last used</th><th>State</th><th /></tr></thead>
          <tbody>{tokens.map((t) => (
            <tr key={t.id} data-token-id={t.id}><td><code>{t.id}</code></td><td title={t.created_at}>{ago(t.created_at)}</td>
              <td>{t.created_by ?? '–'}</td>
              <td data-key="last-used" title={t.last_used_at ?? ''}>{t.last_used_at ? ago(t.last_used_at) : 'never'}</td>
              <td data-key="state" title={t.revoked_at ?? ''}>{t.revoked_at ? `revoked ${ago(t.revoked_at)}` : 'active'}</td>
              <td>{!t.revoked_at && <button type="button" class="danger small" data-test="revoke-worker-token" onClick={() => revoke(t.id)}>Revoke</button>}</td></tr>
          ))}</tbody>
        </table>
      )}
    </section>
  );
}

/** The new secret and the command that joins a host with it, for the slice and host typed. */
function FreshToken({ cluster, token }: { cluster: Cluster; token: WorkerTokenCreated }) {
  const [slice, setSlice] = useState('0');
  const [host, setHost] = useState('0');
  const [workdir, setWorkdir] = useState(DEFAULT_WORKDIR);
  const [runAs, setRunAs] = useState(DEFAULT_RUN_AS);
  const s = placeIndex(slice, cluster.num_slices, 'slice');
  const h = placeIndex(host, cluster.accelerator.hosts_per_slice ?? 0, 'host');
  const command = joinCommand({ server: window.location.origin, token: token.token, cluster: cluster.name, slice: s.value, host: h.value, workdir, runAs });
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  return (
    <div class="notice" role="status" data-test="worker-token-created">
      <div>New worker token <code>{token.id}</code> (shown once): <code class="secret" data-test="worker-token-secret">{token.token}</code> <CopyButton text={token.token} /></div>
      <h3>Join a host</h3>
      <form class="inline" onSubmit={(e) => e.preventDefault()} aria-label="The host that joins">
        <label>Slice <input name="join_slice" inputMode="numeric" size={4} value={slice} onInput={value(setSlice)} />{s.error && <small class="bad">{s.error}</small>}</label>
        <label>Host <input name="join_host" inputMode="numeric" size={4} value={host} onInput={value(setHost)} />{h.error && <small class="bad">{h.error}</small>}</label>
        <label>Work directory <input name="join_workdir" value={workdir} onInput={value(setWorkdir)} /></label>
        <label>Ranks run as <input name="join_run_as" value={runAs} onInput={value(setRunAs)} /></label>
      </form>
      <div class="command"><pre data-test="join-command">{command}</pre><CopyButton text={command} /></div>
      <p class="muted small">Run it on the host (as root, or as the account named in <em>Ranks run as</em>), one agent per host with its slice and host index; the server address is this page{'\u2019'}s, so the host must reach it. Under systemd put the two variables in <code>/etc/podium/worker.env</code> (<code>deploy/systemd/podium-worker.service</code>). The provisioning commands below start an agent on every host they create and take this token from <code>PODIUM_TOKEN</code>.</p>
    </div>
  );
}
