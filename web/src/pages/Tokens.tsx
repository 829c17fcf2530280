// /tokens: the signed-in user's API tokens: create (shown once), revoke.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, Empty, ErrorBox, Loading, usePoll } from '../components/ui';
import { ago } from '../format';

export function Tokens() {
  const q = usePoll(() => api.tokens(), [], 0, false);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    try { const t = await api.createToken(name); setCreated(t.token ?? null); setName(''); q.reload(); setError(null); } catch (err) { setError(err); }
  };
  const revoke = async (id: string) => {
    if (!confirm('Revoke this token? Clients using it stop working.')) return;
    try { await api.revokeToken(id); q.reload(); } catch (err) { setError(err); }
  };
  return (
    <main>
      <header class="page-head"><h1>API tokens</h1></header>
      <form class="inline" onSubmit={create}>
        <label>Name <input value={name} required maxLength={128} placeholder="laptop, ci" onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>
        <button type="submit" class="primary">Create token</button>
      </form>
      {created && <div class="notice" role="status">New token (shown once): <code class="secret">{created}</code> <CopyButton text={created} /></div>}
      <ErrorBox error={error || q.error} />
      {!q.data ? <Loading /> : q.data.items.length === 0 ? <Empty>No tokens.</Empty> : (
        <table class="data">
          <thead><tr><th>Name</th><th>Id</th><th>Created</th><th>Last used</th><th>State</th><th /></tr></thead>
          <tbody>{q.data.items.map((t) => (
            <tr key={t.id}><td>{t.name}</td><td><code>{t.id}</code></td><td>{ago(t.created_at)}</td><td>{ago(t.last_used_at)}</td>
              <td>{t.revoked_at ? 'revoked' : 'active'}</td>
              <td>{!t.revoked_at && <button type="button" class="danger small" onClick={() => revoke(t.id)}>Revoke</button>}</td></tr>
          ))}</tbody>
        </table>
      )}
    </main>
  );
}
