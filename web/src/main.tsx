// The dashboard's shell: who is signed in, the navigation, and the page for the URL.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { match, navigate, onLinkClick, useLocation } from './router';
import { Loading } from './components/ui';
import { Login } from './pages/Login';
import { Runs } from './pages/Runs';
import { NewRun } from './pages/NewRun';
import { RunPage } from './pages/Run';
import { Compare, SavedComparePage } from './pages/Compare';
import { ProjectPage, Projects } from './pages/Projects';
import { ClusterPage, Clusters } from './pages/Clusters';
import { Import } from './pages/Import';
import { Tokens } from './pages/Tokens';
import { Notifications } from './pages/Notifications';
import { Datasets } from './pages/Datasets';
import { Models } from './pages/Models';
import { Users } from './pages/Users';
import { MeContext } from './session';
import { canManageUsers } from './userForm';
import type { Me } from './types';
import './styles.css';

function Page({ path, search }: { path: string; search: URLSearchParams }) {
  let m: Record<string, string> | null;
  if (path === '/' || path === '/runs') return <Runs search={search} />;
  if (path === '/runs/new') return <NewRun />;
  if ((m = match('/runs/:id', path))) return <RunPage id={m.id} />;
  if (path === '/compare') return <Compare search={search} />;
  if ((m = match('/compare/:id', path))) return <SavedComparePage id={m.id} />;
  if (path === '/projects') return <Projects />;
  if ((m = match('/projects/:name', path))) return <ProjectPage name={m.name} />;
  if (path === '/clusters') return <Clusters />;
  if ((m = match('/clusters/:name', path))) return <ClusterPage name={m.name} />;
  if (path === '/datasets') return <Datasets />;
  if (path === '/models') return <Models />;
  if (path === '/import') return <Import />;
  if (path === '/tokens') return <Tokens />;
  if (path === '/settings/notifications') return <Notifications />;
  if (path === '/users') return <Users />;
  return <main><h1>Not found</h1><p>No page at <code>{path}</code>. <a href="/runs">Runs</a></p></main>;
}

const NAV = [
  ['/runs', 'Runs'], ['/runs/new', 'New run'], ['/compare', 'Compare'], ['/projects', 'Projects'], ['/clusters', 'Clusters'],
  ['/datasets', 'Datasets'], ['/models', 'Models'], ['/import', 'Import'], ['/tokens', 'Tokens'],
  ['/settings/notifications', 'Notifications'],
] as const;
/** Shown to admins only (the server answers 403 to anyone else). */
const ADMIN_NAV = [['/users', 'Users']] as const;

function App() {
  const loc = useLocation();
  const [me, setMe] = useState<Me | null | undefined>(undefined);

  useEffect(() => {
    api.me().then(setMe).catch((e) => {
      if (e instanceof ApiError && e.status === 401) setMe(null);
      else setMe(null);
    });
  }, []);

  useEffect(() => {
    if (me === null && loc.path !== '/login') {
      navigate(`/login?next=${encodeURIComponent(loc.path + (loc.search.toString() ? `?${loc.search}` : ''))}`, true);
    }
  }, [me, loc.path]);

  if (me === undefined) return <Loading />;
  if (me === null || loc.path === '/login') {
    if (me && loc.path === '/login') { navigate(safeNext(loc.search.get('next')), true); return <Loading />; }
    return <Login onLogin={(m) => { setMe(m); navigate(safeNext(loc.search.get('next')), true); }} />;
  }
  const signOut = async () => {
    try { await api.logout(); } finally { setMe(null); navigate('/login', true); }
  };
  return (
    <div class="app" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <a class="skip" href="#content">Skip to content</a>
      <nav class="top" aria-label="Main">
        <a class="brand" href="/runs">Podium</a>
        {[...NAV, ...(canManageUsers(me) ? ADMIN_NAV : [])].map(([href, label]) => (
          <a key={href} href={href} aria-current={loc.path === href || (href === '/runs' && /^\/runs\/(?!new)/.test(loc.path)) ? 'page' : undefined}>{label}</a>
        ))}
        <span class="spacer" />
        <span class="muted small">{me.username} ({me.role})</span>
        <button type="button" class="small" onClick={signOut}>Sign out</button>
      </nav>
      <div id="content"><MeContext.Provider value={me}><Page path={loc.path} search={loc.search} /></MeContext.Provider></div>
    </div>
  );
}

/** Only a local path: an open redirect through ?next= is refused. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/runs';
}

render(<App />, document.getElementById('app')!);
