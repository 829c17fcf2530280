// Worker tokens on a cluster page: an admin makes one, joins a real podium-worker with the
// command the page shows, and revokes it.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { test, assert, statusWithToken } from './fixtures.mjs';

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

test('an admin makes a worker token on a cluster page, joins a host with the command shown, and revokes the token', async ({ page, podium, shot }) => {
  // The agent this test starts from the command the page shows: stopped at its end.
  const joined = [];
  const stopJoined = () => {
    for (const a of joined.splice(0)) { try { if (a.exitCode === null) process.kill(-a.pid, 'SIGTERM'); } catch { /* gone */ } }
  };
  await podium.call('POST', '/api/v1/clusters', { name: 'web-join', accelerator: 'cpu-1', num_slices: 1, capacity: 'on-demand', labels: {} });
  await page.goto(`${podium.base}/clusters/web-join`);
  await page.click('[data-test=create-worker-token]');
  await page.waitForSelector('[data-test=worker-token-secret]');
  const secret = (await page.textContent('[data-test=worker-token-secret]')).trim();
  assert(/^pdw_[A-Za-z0-9_-]{43}$/.test(secret), `the secret is shown: ${secret}`);
  const id = await page.getAttribute('[data-test=worker-token-list] tr[data-token-id]', 'data-token-id');
  assert(id.startsWith('wtk_'), `the token's id: ${id}`);
  const workdir = mkdtempSync(join(tmpdir(), 'podium-web-join-'));
  await page.fill('input[name=join_workdir]', workdir);
  await page.fill('input[name=join_run_as]', userInfo().username);
  await page.fill('input[name=join_host]', '1');
  await page.waitForSelector('[data-test=worker-token-created] small.bad:has-text("0 to 0")');
  await page.fill('input[name=join_host]', '0');
  const command = await page.textContent('[data-test=join-command]');
  assert(command.startsWith(`PODIUM_SERVER=${podium.base} PODIUM_TOKEN=${secret} \\\n`), `server and token in the environment: ${command}`);
  assert(command.includes('podium-worker --cluster web-join --slice 0 --host 0 --workdir '), `the host's place: ${command}`);
  await shot('cluster-worker-token');
  // The command exactly as shown, with podium-worker found on PATH.
  const log = openSync(join(workdir, 'agent.log'), 'w');
  const agent = spawn('bash', ['-c', command], { env: { ...process.env, PATH: `${process.env.PODIUM_BIN_DIR}:${process.env.PATH}` }, detached: true, stdio: ['ignore', log, log] });
  joined.push(agent);
  try {
    await page.waitForSelector('.host-grid .host.healthy', { timeout: 30000 });
    const workers = await podium.call('GET', '/api/v1/clusters/web-join/workers');
    assert(workers.items.length === 1 && workers.items[0].slice === 0 && workers.items[0].host === 0, `one agent joined: ${JSON.stringify(workers.items)}`);

    await page.click(`[data-test=worker-token-list] tr[data-token-id="${id}"] [data-test=revoke-worker-token]`);
    await page.waitForSelector(`[data-test=worker-token-list] tr[data-token-id="${id}"] td[data-key=state]:has-text("revoked")`);
    assert(await page.locator('[data-test=worker-token-secret]').count() === 0, 'the secret is gone once revoked');
    const register = { method: 'POST', body: JSON.stringify({ cluster: 'web-join', slice: 0, host: 0, hostname: 'x', address: '127.0.0.1', devices: 1, version: 'test' }) };
    assert(await statusWithToken(podium, secret, '/api/v1/agent/register', register) === 401, 'the revoked token is refused');
    // The list is the server's: after a reload the token is still there, revoked, with the
    // agent's registration as its last use; and the secret is never shown again.
    await page.reload();
    await page.waitForSelector(`[data-test=worker-token-list] tr[data-token-id="${id}"] td[data-key=state]:has-text("revoked")`);
    const lastUsed = (await page.textContent(`[data-test=worker-token-list] tr[data-token-id="${id}"] td[data-key=last-used]`)).trim();
    assert(lastUsed !== 'never', `the agent's registration is the token's last use: ${lastUsed}`);
    assert(!(await page.content()).includes(secret), 'the secret is never shown again');
    const listed = await podium.call('GET', '/api/v1/clusters/web-join/worker-tokens');
    assert(listed.items.length === 1 && listed.items[0].id === id && listed.items[0].revoked_at, `the server lists it revoked: ${JSON.stringify(listed.items)}`);
  } finally {
    stopJoined();
  }
});
