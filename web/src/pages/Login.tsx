import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox } from '../components/ui';
import type { Me } from '../types';

export function Login({ onLogin }: { onLogin: (me: Me) => void }) {
  const [mode, setMode] = useState<'token' | 'password'>('token');
  const [token, setToken] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await api.login(mode === 'token' ? { token: token.trim() } : { username, password });
      onLogin(me);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="login">
      <h1>Sign in to Podium</h1>
      <div class="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={mode === 'token'} onClick={() => setMode('token')}>API token</button>
        <button type="button" role="tab" aria-selected={mode === 'password'} onClick={() => setMode('password')}>Username and password</button>
      </div>
      <form onSubmit={submit}>
        {mode === 'token' ? (
          <label>API token
            <input data-test="login-token" type="password" autoComplete="off" value={token} required
              placeholder="pdm_…" onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
            <small>The quick start prints the admin token.</small>
          </label>
        ) : (
          <>
            <label>Username <input autoComplete="username" value={username} required onInput={(e) => setUsername((e.target as HTMLInputElement).value)} /></label>
            <label>Password <input type="password" autoComplete="current-password" value={password} required onInput={(e) => setPassword((e.target as HTMLInputElement).value)} /></label>
          </>
        )}
        <button data-test="login-submit" class="primary" type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
      <ErrorBox error={error} />
    </main>
  );
}
