// /users (admins): every account with its role and state; create one (its first API token shown
// once), change a role, disable or enable, set a new password. Others get a plain message.
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, Empty, ErrorBox, FieldMessage, Loading, usePoll, useSubmit } from '../components/ui';
import { serverFieldErrors } from '../fields';
import { ago } from '../format';
import { useMe } from '../session';
import {
  canManageUsers, disablePatch, disableQuestion, EMPTY_USER_FORM, newUserBody, passwordPatch, ROLE_HELP,
  ROLES, sortUsers, userActions, type NewUserForm,
} from '../userForm';
import type { Role, User, UserCreated } from '../types';

export function Users() {
  const me = useMe();
  if (!canManageUsers(me)) {
    return (
      <main>
        <header class="page-head"><h1>Users</h1></header>
        <div class="notice" role="status" data-test="users-forbidden">
          Only admins manage users. You are signed in as <strong>{me?.username}</strong> ({me?.role}); an admin creates
          accounts and changes roles. Your own API tokens are on <a href="/tokens">Tokens</a>.
        </div>
      </main>
    );
  }
  return <UsersAdmin />;
}

function UsersAdmin() {
  const q = usePoll(() => api.users(), [], 0, false);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<UserCreated | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const users = useMemo(() => sortUsers(q.data?.items ?? []), [q.data]);
  const replace = (u: User) => q.setData(q.data ? { ...q.data, items: q.data.items.map((x) => (x.id === u.id ? u : x)) } : q.data);
  return (
    <main>
      <header class="page-head"><h1>Users</h1>
        {!creating && <button type="button" class="primary" onClick={() => { setCreating(true); setCreated(null); }}>New user</button>}
      </header>
      {creating && <NewUser onCancel={() => setCreating(false)} onCreated={(u) => { setCreated(u); setCreating(false); q.reload(); }} />}
      {created && (
        <div class="notice" role="status" data-test="user-created">
          <strong>{created.username}</strong> ({created.role}) created. Their first API token (named <code>initial</code>, shown once):{' '}
          <code class="secret" data-test="user-token">{created.token}</code> <CopyButton text={created.token} />
          <div class="muted small">They sign in with it on the dashboard{'\u2019'}s sign-in page, or use it as <code>PODIUM_TOKEN</code>.</div>
        </div>
      )}
      <ErrorBox error={q.error || actionError} />
      {!q.data ? <Loading /> : users.length === 0 ? <Empty>No users.</Empty> : (
        <table class="data" data-test="users-table">
          <thead><tr><th>Username</th><th>Role</th><th>State</th><th>Created</th><th>Actions</th></tr></thead>
          <tbody>{users.map((u) => <UserRow key={u.id} user={u} onChanged={(x) => { replace(x); setActionError(null); }} onError={setActionError} />)}</tbody>
        </table>
      )}
      <p class="muted small">Accounts are not deleted: disable one to end its sessions and stop its tokens. The API does not report sign-ins; a user{'\u2019'}s own tokens, with when each was last used, are on their <a href="/tokens">Tokens</a> page.</p>
    </main>
  );
}

function NewUser({ onCancel, onCreated }: { onCancel: () => void; onCreated: (u: UserCreated) => void }) {
  const [form, setForm] = useState<NewUserForm>(EMPTY_USER_FORM);
  const { body, errors } = useMemo(() => newUserBody(form), [form]);
  const { busy, error, submit } = useSubmit(() => api.createUser(body), onCreated, errors.length > 0);
  const shown = [...errors, ...serverFieldErrors(error)];
  const set = (k: keyof NewUserForm) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  return (
    <form class="run-form cluster-form" onSubmit={submit} aria-label="New user" data-test="user-form">
      <fieldset>
        <legend>New user</legend>
        <label>Username <input name="username" value={form.username} onInput={set('username')} autoComplete="off" placeholder="letters, digits, - _ . @" /><FieldMessage errors={shown} field="username" /></label>
        <label>Role
          <select name="role" value={form.role} onChange={set('role')}>{ROLES.map((r) => <option key={r} value={r}>{r}</option>)}</select>
          <small class="muted">{ROLE_HELP[form.role]}</small>
        </label>
        <label>Password <input name="password" type="password" autoComplete="new-password" value={form.password} onInput={set('password')} placeholder="optional, 8 or more characters" /><FieldMessage errors={shown} field="password" /></label>
        <label>Password again <input name="password_again" type="password" autoComplete="new-password" value={form.password_again} onInput={set('password_again')} /><FieldMessage errors={shown} field="password_again" /></label>
      </fieldset>
      <p class="muted small">Without a password the user signs in with API tokens only, on the dashboard and with <code>podium</code>: the first one is shown once when you create the account.</p>
      <div class="submit-row">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" class="primary" disabled={busy || errors.length > 0}>{busy ? 'Creating…' : 'Create user'}</button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}

function UserRow({ user: u, onChanged, onError }: { user: User; onChanged: (u: User) => void; onError: (e: unknown) => void }) {
  const me = useMe();
  const can = userActions(me, u);
  const [busy, setBusy] = useState(false);
  const [settingPassword, setSettingPassword] = useState(false);
  const patch = async (p: Parameters<typeof api.updateUser>[1]) => {
    setBusy(true);
    try { onChanged(await api.updateUser(u.id, p)); } catch (err) { onError(err); } finally { setBusy(false); }
  };
  const toggle = () => {
    const question = disableQuestion(u);
    if (question && !confirm(question)) return;
    patch(disablePatch(u));
  };
  return (
    <>
      <tr data-user={u.username}>
        <td>{u.username}{can.self && <span class="tag">you</span>}</td>
        <td>
          <select name="role" aria-label={`Role of ${u.username}`} value={u.role} disabled={!can.changeRole || busy} title={can.changeRole ? undefined : can.why}
            onChange={(e) => patch({ role: (e.target as HTMLSelectElement).value as Role })}>
            {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </td>
        <td data-key="state"><span class={u.disabled ? 'bad' : 'good'}>{u.disabled ? 'disabled' : 'active'}</span></td>
        <td>{ago(u.created_at)}</td>
        <td><span class="actions">
          <button type="button" class={u.disabled ? 'small' : 'small danger'} data-test="toggle-disabled" disabled={!can.toggleDisabled || busy} title={can.toggleDisabled ? undefined : can.why} onClick={toggle}>
            {u.disabled ? 'Enable' : 'Disable'}
          </button>
          {!settingPassword && <button type="button" class="small" data-test="set-password" onClick={() => setSettingPassword(true)}>Set password</button>}
        </span></td>
      </tr>
      {settingPassword && (
        <tr><td colSpan={5}><SetPassword user={u} onDone={(x) => { setSettingPassword(false); if (x) onChanged(x); }} /></td></tr>
      )}
    </>
  );
}

function SetPassword({ user, onDone }: { user: User; onDone: (u: User | null) => void }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const { patch, errors } = passwordPatch(password, again);
  const { busy, error, submit } = useSubmit(() => api.updateUser(user.id, patch), onDone, errors.length > 0);
  const shown = [...(password || again ? errors : []), ...serverFieldErrors(error)];
  return (
    <form class="inline" onSubmit={submit} aria-label={`New password for ${user.username}`} data-test="password-form">
      <label>New password for {user.username} <input name="new_password" type="password" autoComplete="new-password" value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} /><FieldMessage errors={shown} field="password" /></label>
      <label>Again <input name="new_password_again" type="password" autoComplete="new-password" value={again} onInput={(e) => setAgain((e.target as HTMLInputElement).value)} /><FieldMessage errors={shown} field="password_again" /></label>
      <button type="submit" class="primary" disabled={busy || errors.length > 0}>{busy ? 'Saving…' : 'Save password'}</button>
      <button type="button" onClick={() => onDone(null)}>Cancel</button>
      <ErrorBox error={error} />
    </form>
  );
}
