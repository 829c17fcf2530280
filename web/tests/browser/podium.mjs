// A real Podium for the browser tests: a fresh database on the test PostgreSQL, podium-server
// serving the built dashboard, a cpu-2 cluster with two podium-worker agents, a small dataset.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, openSync, mkdirSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

const webRoot = resolve(new URL('../../dist', import.meta.url).pathname);
const repoRoot = resolve(new URL('../../..', import.meta.url).pathname);

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run through scripts/test.sh (it starts the test PostgreSQL and builds the binaries)`);
  return v;
}

function waitForLine(child, pattern, ms, what) {
  return new Promise((resolveP, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not print ${pattern} within ${ms} ms:\n${seen.slice(-2000)}`)), ms);
    const onData = (d) => {
      seen += d.toString();
      const m = pattern.exec(seen);
      if (m) { clearTimeout(timer); child.stdout.off('data', onData); resolveP(m); }
    };
    child.stdout.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${what} exited with ${code}:\n${seen.slice(-2000)}`)); });
  });
}

export async function startPodium({ workers = 2 } = {}) {
  const bin = need('PODIUM_BIN_DIR');
  const dbUrl = need('PODIUM_TEST_DATABASE_URL');
  const dir = mkdtempSync(join(tmpdir(), 'podium-web-'));
  const dbName = `podium_web_${process.pid}_${randomBytes(3).toString('hex')}`;
  const adminUrl = dbUrl.replace(/\/[^/?]*(\?.*)?$/, '/postgres$1');
  execFileSync('psql', [adminUrl, '-q', '-c', `CREATE DATABASE ${dbName}`]);
  const url = dbUrl.replace(/\/[^/?]*(\?.*)?$/, `/${dbName}$1`);
  const token = `pdm_${randomBytes(24).toString('base64url')}`;
  const children = [];
  const serverLog = openSync(join(dir, 'server.log'), 'w');
  const server = spawn(join(bin, 'podium-server'), [], {
    env: { ...process.env, PODIUM_DATABASE_URL: url, PODIUM_ADMIN_TOKEN: token, PODIUM_LISTEN: '127.0.0.1:0',
      PODIUM_DATA_DIR: join(dir, 'var'), PODIUM_WEB_ROOT: webRoot,
      // notifications.spec.mjs: its webhook receiver listens on 127.0.0.1.
      PODIUM_WEBHOOKS_ALLOW_HOSTS: '127.0.0.1', PODIUM_WEBHOOKS_POLL_INTERVAL_MS: '200' },
    stdio: ['ignore', 'pipe', serverLog],
  });
  children.push(server);
  const m = await waitForLine(server, /listening on (http:\/\/[0-9.]+:\d+)/, 60000, 'podium-server');
  const base = m[1];

  const call = async (method, path, body) => {
    const res = await fetch(base + path, {
      method, headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const data = text ? JSON.parse(text) : null;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return data;
  };

  await call('POST', '/api/v1/clusters', { name: 'web', accelerator: 'cpu-2', num_slices: 1, capacity: 'on-demand', price_per_chip_hour: 0.5, labels: {} });
  // ~70 KB of text: with 2 devices × 4 × 128 tokens a step, the data lasts ~67 steps.
  const data = join(dir, 'text.txt');
  execFileSync('python3', [join(repoRoot, 'engine/workloads/reference/make_dataset.py'), data, '--size', '70K']);
  await call('POST', '/api/v1/datasets', { name: 'web-text', uri: data, format: 'text' });
  const wt = await call('POST', '/api/v1/clusters/web/worker-tokens');
  for (let host = 0; host < workers; host++) {
    const wdir = join(dir, `worker${host}`);
    mkdirSync(wdir, { recursive: true });
    const w = spawn(join(bin, 'podium-worker'), ['--server', base, '--cluster', 'web', '--slice', '0', '--host', String(host), '--workdir', wdir, '--address', '127.0.0.1', '--log-format', 'text',
      // Ranks run as this account: an agent running as root refuses to start without --run-as.
      '--run-as', userInfo().username], {
      env: { ...process.env, PODIUM_TOKEN: wt.token }, stdio: ['ignore', 'pipe', openSync(join(wdir, 'agent.log'), 'w')],
    });
    children.push(w);
    await waitForLine(w, /registered as/, 30000, `podium-worker host ${host}`);
  }

  const stop = async () => {
    for (const c of children.reverse()) {
      if (c.exitCode === null) c.kill('SIGTERM');
    }
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    try { execFileSync('psql', [adminUrl, '-q', '-c', `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`]); } catch { /* best effort */ }
  };
  return { base, token, call, dir, stop, databaseUrl: url };
}
