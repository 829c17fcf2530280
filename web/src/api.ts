// The one typed client of the Podium REST API. Same origin: the session cookie authenticates.
import type {
  Answer, ClusterCreate, ClusterPatch, DatasetCreate, Me, ModelCreate, Problem, RequestBody, UserCreate,
  UserPatch,
} from './types';

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail || problem.title || `HTTP ${problem.status}`);
    this.status = problem.status;
    this.problem = problem;
  }
}

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface RunFilters {
  state?: string; cluster?: string; model?: string; owner?: string; tag?: string; q?: string;
  project?: string; dataset?: string; accelerator?: string; since?: string; until?: string;
  limit?: number; cursor?: string | null;
}

export function query(params: Record<string, string | number | null | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

const seg = encodeURIComponent;

export class Api {
  constructor(private readonly fetchFn: Fetch = (i, init) => fetch(i, init), private readonly base = '/api/v1') {}

  /** Every call: JSON in, JSON out; a non-2xx answer becomes an ApiError with the problem. */
  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const init: RequestInit = { method, credentials: 'same-origin', headers: { Accept: 'application/json' }, signal };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await this.fetchFn(this.base + path, init);
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw e;
      throw new ApiError({ status: 0, title: 'Network error', detail: 'the server could not be reached' });
    }
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    let data: unknown = undefined;
    if (text) {
      try { data = JSON.parse(text); } catch { data = undefined; }
    }
    if (!res.ok) {
      const p = (data && typeof data === 'object' ? data : {}) as Problem;
      throw new ApiError({ ...p, status: res.status, title: p.title || res.statusText });
    }
    return data as T;
  }

  /** The server answers `{"user": Me}`: the caller gets the user itself. */
  async login(credentials: { token: string } | { username: string; password: string }): Promise<Me> {
    return (await this.request<Answer<'login'>>('POST', '/auth/login', credentials)).user;
  }
  logout() { return this.request<void>('POST', '/auth/logout', {}); }
  me() { return this.request<Answer<'getMe'>>('GET', '/auth/me'); }

  runs(f: RunFilters = {}) {
    return this.request<Answer<'listRuns'>>('GET', `/runs${query({ ...f, cursor: f.cursor ?? undefined })}`);
  }
  run(id: string) { return this.request<Answer<'getRun'>>('GET', `/runs/${seg(id)}`); }
  submitRun(spec: Record<string, unknown>) { return this.request<Answer<'submitRun'>>('POST', '/runs', spec); }
  plan(spec: Record<string, unknown>, signal?: AbortSignal) { return this.request<Answer<'planRun'>>('POST', '/plan', spec, signal); }
  cancelRun(id: string) { return this.request<Answer<'cancelRun'>>('POST', `/runs/${seg(id)}/cancel`, {}); }
  /** Name, tags, notes, project (any subset); the run's owner or an admin, any state. */
  updateRun(id: string, patch: RequestBody<'updateRun'>) {
    return this.request<Answer<'updateRun'>>('PATCH', `/runs/${seg(id)}`, patch);
  }
  /** Finished runs only (409 otherwise); their owner or an admin. */
  deleteRun(id: string) { return this.request<void>('DELETE', `/runs/${seg(id)}`); }
  summary(id: string) { return this.request<Answer<'getRunSummary'>>('GET', `/runs/${seg(id)}/summary`); }
  metrics(id: string, p: { fields?: string; from_step?: number; to_step?: number; max_points?: number } = {}) {
    return this.request<Answer<'getRunMetrics'>>('GET', `/runs/${seg(id)}/metrics${query(p)}`);
  }
  attempts(id: string) { return this.request<Answer<'listRunAttempts'>>('GET', `/runs/${seg(id)}/attempts`); }
  events(id: string) { return this.request<Answer<'listRunEvents'>>('GET', `/runs/${seg(id)}/events`); }
  checkpoints(id: string) { return this.request<Answer<'listRunCheckpoints'>>('GET', `/runs/${seg(id)}/checkpoints`); }
  logs(id: string, p: { attempt?: number; rank?: number; after?: string; limit?: number } = {}) {
    return this.request<Answer<'getRunLogs'>>('GET', `/runs/${seg(id)}/logs${query(p)}`);
  }
  logStreamUrl(id: string, p: { attempt?: number; rank?: number } = {}) {
    return `${this.base}/runs/${seg(id)}/logs/stream${query(p)}`;
  }
  importLog(body: RequestBody<'importRun'>) {
    return this.request<Answer<'importRun'>>('POST', '/runs/import', body);
  }
  compare(runs: string[], baseline?: string) {
    return this.request<Answer<'compareRuns'>>('GET', `/compare${query({ runs: runs.join(','), baseline })}`);
  }
  /** A named set of runs with its baseline, reloaded by /compare/{id}. */
  saveCompare(body: RequestBody<'saveCompare'>) { return this.request<Answer<'saveCompare'>>('POST', '/compares', body); }
  savedCompare(id: string) { return this.request<Answer<'getSavedCompare'>>('GET', `/compares/${seg(id)}`); }

  projects() { return this.request<Answer<'listProjects'>>('GET', '/projects?limit=500'); }
  project(name: string) { return this.request<Answer<'getProject'>>('GET', `/projects/${seg(name)}`); }
  createProject(body: RequestBody<'createProject'>) { return this.request<Answer<'createProject'>>('POST', '/projects', body); }
  /** Its creator or an admin; a rename carries its runs along. */
  updateProject(name: string, patch: RequestBody<'updateProject'>) {
    return this.request<Answer<'updateProject'>>('PATCH', `/projects/${seg(name)}`, patch);
  }
  /** 409 while it holds runs. */
  deleteProject(name: string) { return this.request<void>('DELETE', `/projects/${seg(name)}`); }

  /** The slice types of the server's accelerator catalog (chips, devices, hosts of each). */
  accelerators() { return this.request<Answer<'listAccelerators'>>('GET', '/accelerators'); }
  clusters() { return this.request<Answer<'listClusters'>>('GET', '/clusters?limit=500'); }
  cluster(name: string) { return this.request<Answer<'getCluster'>>('GET', `/clusters/${seg(name)}`); }
  createCluster(body: ClusterCreate) { return this.request<Answer<'createCluster'>>('POST', '/clusters', body); }
  updateCluster(name: string, patch: ClusterPatch) { return this.request<Answer<'updateCluster'>>('PATCH', `/clusters/${seg(name)}`, patch); }
  /** 409 while any run, in any state, refers to the cluster. */
  deleteCluster(name: string) { return this.request<void>('DELETE', `/clusters/${seg(name)}`); }
  workers(name: string) { return this.request<Answer<'listClusterWorkers'>>('GET', `/clusters/${seg(name)}/workers`); }
  provisioning(name: string) {
    return this.request<Answer<'getClusterProvisioning'>>('GET', `/clusters/${seg(name)}/provisioning`);
  }
  /** Admins only: the cluster's tokens, revoked ones included, newest first; never a secret. */
  workerTokens(cluster: string) {
    return this.request<Answer<'listWorkerTokens'>>('GET', `/clusters/${seg(cluster)}/worker-tokens?limit=500`);
  }
  /** Admins only; the secret is in the answer only. */
  createWorkerToken(cluster: string) {
    return this.request<Answer<'createWorkerToken'>>('POST', `/clusters/${seg(cluster)}/worker-tokens`);
  }
  /** 204 again for a token already revoked; 404 when it is not this cluster's. */
  revokeWorkerToken(cluster: string, id: string) {
    return this.request<void>('DELETE', `/clusters/${seg(cluster)}/worker-tokens/${seg(id)}`);
  }
  datasets() { return this.request<Answer<'listDatasets'>>('GET', '/datasets?limit=500'); }
  createDataset(body: DatasetCreate) { return this.request<Answer<'createDataset'>>('POST', '/datasets', body); }
  /** Its creator or an admin; 409 while runs refer to it. The data itself is not touched. */
  deleteDataset(name: string) { return this.request<void>('DELETE', `/datasets/${seg(name)}`); }
  models() { return this.request<Answer<'listModels'>>('GET', '/models?limit=500'); }
  /** A MaxText model config (yaml text or config object); 409 when the name exists. */
  createModel(body: ModelCreate) { return this.request<Answer<'createModel'>>('POST', '/models', body); }
  /** Its creator or an admin, never a built-in (403); 409 while a live run uses it. */
  deleteModel(name: string) { return this.request<void>('DELETE', `/models/${seg(name)}`); }

  tokens() { return this.request<Answer<'listTokens'>>('GET', '/tokens'); }
  createToken(name: string) { return this.request<Answer<'createToken'>>('POST', '/tokens', { name }); }
  revokeToken(id: string) { return this.request<void>('DELETE', `/tokens/${seg(id)}`); }

  /** Admins only (x-podium-access: admin). */
  users() { return this.request<Answer<'listUsers'>>('GET', '/users?limit=500'); }
  createUser(body: UserCreate) { return this.request<Answer<'createUser'>>('POST', '/users', body); }
  /** 409 when an admin demotes or disables their own account. */
  updateUser(id: string, patch: UserPatch) { return this.request<Answer<'updateUser'>>('PATCH', `/users/${seg(id)}`, patch); }
}

export const api = new Api();
