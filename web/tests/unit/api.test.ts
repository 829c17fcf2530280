import { describe, expect, it } from 'vitest';
import { Api, ApiError, query } from '../../src/api';

function fakeFetch(status: number, body: unknown, seen: { url?: string; init?: RequestInit }[] = []) {
  return async (url: string, init?: RequestInit) => {
    seen.push({ url, init });
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    return new Response(status === 204 ? null : text, { status, headers: { 'Content-Type': 'application/json' } });
  };
}

describe('query', () => {
  it('drops empty values and encodes the rest', () => {
    expect(query({ state: 'running', cluster: '', q: 'a b&c', limit: 50, cursor: null })).toBe('?state=running&q=a%20b%26c&limit=50');
    expect(query({})).toBe('');
  });
});

describe('Api', () => {
  it('sends JSON with the session cookie and reads JSON back', async () => {
    const seen: { url?: string; init?: RequestInit }[] = [];
    const api = new Api(fakeFetch(200, { ok: true, errors: [] }, seen));
    const plan = await api.plan({ name: 'x' });
    expect(plan.ok).toBe(true);
    expect(seen[0].url).toBe('/api/v1/plan');
    expect(seen[0].init?.method).toBe('POST');
    expect(seen[0].init?.credentials).toBe('same-origin');
    expect((seen[0].init?.headers as Record<string, string>)['Content-Type']).toBe('application/json');
    expect(seen[0].init?.body).toBe('{"name":"x"}');
  });

  it('turns a problem+json answer into an ApiError with its fields', async () => {
    const api = new Api(fakeFetch(422, { type: 't', title: 'Unprocessable Entity', status: 422, detail: 'plan has errors', errors: [{ field: 'steps', message: 'too many' }] }));
    const err = await api.submitRun({}).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(422);
    expect(err.message).toBe('plan has errors');
    expect(err.problem.errors[0].field).toBe('steps');
  });

  it('reports a body that is not JSON by its status', async () => {
    const err = await new Api(fakeFetch(502, '<html>bad gateway</html>')).run('r').catch((e) => e);
    expect(err.status).toBe(502);
  });

  it('reports an unreachable server as status 0', async () => {
    const api = new Api(async () => { throw new TypeError('Failed to fetch'); });
    const err = await api.me().catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(0);
  });

  it('escapes ids in paths and builds list and stream URLs', async () => {
    const seen: { url?: string }[] = [];
    const api = new Api(fakeFetch(200, { items: [], next_cursor: null }, seen));
    await api.runs({ state: 'queued', limit: 50, cursor: 'abc.def' });
    await api.metrics('run/../x', { fields: 'loss', max_points: 1000 });
    expect(seen[0].url).toBe('/api/v1/runs?state=queued&limit=50&cursor=abc.def');
    expect(seen[1].url).toBe('/api/v1/runs/run%2F..%2Fx/metrics?fields=loss&max_points=1000');
    expect(api.logStreamUrl('r1', { rank: 0 })).toBe('/api/v1/runs/r1/logs/stream?rank=0');
  });

  it('signs in as the user the server names in {"user": ...}', async () => {
    const me = { kind: 'user', id: 'usr_1', username: 'ada', role: 'admin' };
    expect(await new Api(fakeFetch(200, { user: me })).login({ token: 't' })).toEqual(me);
  });

  it('creates, changes and deletes clusters by name', async () => {
    const seen: { url?: string; init?: RequestInit }[] = [];
    const api = new Api(fakeFetch(200, { name: 'a b' }, seen));
    await api.createCluster({ name: 'v7', accelerator: 'tpu7x-64' });
    await api.updateCluster('a b', { price_per_chip_hour: null });
    expect(seen.map((s) => `${s.init?.method} ${s.url} ${s.init?.body ?? ''}`)).toEqual([
      'POST /api/v1/clusters {"name":"v7","accelerator":"tpu7x-64"}',
      'PATCH /api/v1/clusters/a%20b {"price_per_chip_hour":null}',
    ]);
    const del: { url?: string; init?: RequestInit }[] = [];
    await new Api(fakeFetch(204, undefined, del)).deleteCluster('v7');
    expect(`${del[0].init?.method} ${del[0].url}`).toBe('DELETE /api/v1/clusters/v7');
  });

  it('lists, creates and changes users by id', async () => {
    const seen: { url?: string; init?: RequestInit }[] = [];
    const api = new Api(fakeFetch(200, { items: [], next_cursor: null }, seen));
    await api.users();
    await api.createUser({ username: 'ada', role: 'viewer' });
    await api.updateUser('usr_1', { disabled: true });
    expect(seen.map((s) => `${s.init?.method} ${s.url} ${s.init?.body ?? ''}`)).toEqual([
      'GET /api/v1/users?limit=500 ',
      'POST /api/v1/users {"username":"ada","role":"viewer"}',
      'PATCH /api/v1/users/usr_1 {"disabled":true}',
    ]);
  });

  it('registers and deletes datasets; makes and revokes a cluster\'s worker tokens', async () => {
    const seen: { url?: string; init?: RequestInit }[] = [];
    const api = new Api(fakeFetch(201, { id: 'x' }, seen));
    await api.createDataset({ name: 'c4', uri: 'gs://b/c4/', format: 'arrayrecord', tokens: 5 });
    await api.createWorkerToken('v7 train');
    const del: { url?: string; init?: RequestInit }[] = [];
    const api204 = new Api(fakeFetch(204, undefined, del));
    await api204.deleteDataset('ds_1');
    expect(await api204.revokeWorkerToken('v7 train', 'wtk_1')).toBeUndefined();
    expect([...seen, ...del].map((s) => `${s.init?.method} ${s.url} ${s.init?.body ?? ''}`)).toEqual([
      'POST /api/v1/datasets {"name":"c4","uri":"gs://b/c4/","format":"arrayrecord","tokens":5}',
      'POST /api/v1/clusters/v7%20train/worker-tokens ',
      'DELETE /api/v1/datasets/ds_1 ',
      'DELETE /api/v1/clusters/v7%20train/worker-tokens/wtk_1 ',
    ]);
  });

  it('answers undefined for 204', async () => {
    expect(await new Api(fakeFetch(204, undefined)).revokeToken('t')).toBeUndefined();
  });
});
