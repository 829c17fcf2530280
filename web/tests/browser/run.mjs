// Browser tests: Debian's Chromium driven by playwright-core against a real podium-server with
// real podium-worker agents running the reference workload. Screenshots of every page go to
// web/test-results/ (not committed). Prints "N passed, N failed".
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { startPodium } from './podium.mjs';
import { maxtextLog } from './maxtext_logs.mjs';
import { newRunFormTests } from './new_run_form.mjs';

const out = resolve(new URL('../../test-results', import.meta.url).pathname);
mkdirSync(out, { recursive: true });
const CHROMIUM = process.env.PODIUM_CHROMIUM || '/usr/bin/chromium';

function assert(cond, message) { if (!cond) throw new Error(message); }
function near(a, b, rel = 1e-3) { return Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b)); }

const podium = await startPodium();
// Playwright gives the browser a fresh temporary profile of its own.
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
process.on('SIGINT', () => { podium.stop().finally(() => process.exit(130)); });
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
const page = await context.newPage();
const consoleErrors = [];
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push(String(e)));
page.on('dialog', (d) => d.accept());
const external = [];
page.on('request', (r) => { if (!r.url().startsWith(podium.base) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) external.push(r.url()); });

// Agents a test starts from a command the page shows: stopped by the test, or at the end.
const joined = [];
const stopJoined = () => {
  for (const a of joined.splice(0)) { try { if (a.exitCode === null) process.kill(-a.pid, 'SIGTERM'); } catch { /* gone */ } }
};
const shot = (name) => page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
const state = {};
const results = [];
async function test(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name}: ${e.stack || e}`);
    await shot(`FAILED-${name.replace(/\W+/g, '-')}`).catch(() => {});
  }
}

try {
  await test('an unsigned visit to a deep link lands on the sign-in page', async () => {
    await page.goto(`${podium.base}/runs`);
    await page.waitForSelector('[data-test=login-token]');
    assert(page.url().includes('/login'), `expected /login, at ${page.url()}`);
    await shot('login');
  });

  await test('a wrong token is refused with a clear message', async () => {
    await page.fill('[data-test=login-token]', 'pdm_not-a-token');
    await page.click('[data-test=login-submit]');
    await page.waitForSelector('.error-box');
    assert((await page.textContent('.error-box')).includes('401'), 'expected a 401 message');
  });

  await test('sign in with the admin token', async () => {
    await page.fill('[data-test=login-token]', podium.token);
    await page.click('[data-test=login-submit]');
    await page.waitForURL(/\/runs$/);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'podium_session');
    assert(session && session.httpOnly && session.sameSite === 'Strict', 'session cookie must be HttpOnly and SameSite=Strict');
  });

  await test('submit a reference run through the form after applying a proposed alternative', async () => {
    await page.goto(`${podium.base}/runs/new`);
    await page.waitForSelector('[data-test=plan-panel]');
    await page.fill('input[name=name]', 'web-reference');
    await page.selectOption('select[name=cluster]', 'web');
    await page.selectOption('select[name=dataset]', 'web-text');
    await page.selectOption('select[name=model]', 'reference-tiny');
    await page.selectOption('select[name=workload]', 'reference');
    await page.fill('input[name=per_device_batch_size]', '4');
    await page.fill('input[name=max_target_length]', '128');
    await page.fill('input[name=checkpoint_period]', '20');
    await page.fill('input[name=steps]', '100000');
    // The 70 KB dataset cannot feed 100,000 steps: the plan says so, submit is disabled.
    await page.waitForSelector('[data-test=plan-panel] [data-code=data_exhausted]');
    assert(await page.isDisabled('button[type=submit]'), 'submit must be disabled while the plan has errors');
    await shot('new-run-plan-error');
    await page.click('[data-test=plan-panel] button[data-alternative=data]');
    await page.waitForFunction(() => document.querySelector('[data-test=plan-panel] .badge')?.textContent === 'ok');
    const steps = Number(await page.inputValue('input[name=steps]'));
    assert(steps > 10 && steps < 100000, `the alternative should set a feasible step count, got ${steps}`);
    state.steps = steps;
    assert(!(await page.isDisabled('button[type=submit]')), 'submit enabled once the plan is ok');
    await shot('new-run');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/runs\/run_/);
    state.runId = page.url().split('/runs/')[1];
  });

  await test('the run page charts gain points and the log streams live', async () => {
    await page.waitForSelector('[data-test=run-chart]');
    await page.waitForFunction(() => Number(document.querySelector('[data-test=run-chart]')?.getAttribute('data-points')) > 0, null, { timeout: 90000 });
    const first = Number(await page.getAttribute('[data-test=run-chart]', 'data-points'));
    await page.waitForFunction((n) => Number(document.querySelector('[data-test=run-chart]')?.getAttribute('data-points')) > n, first, { timeout: 60000 });
    assert((await page.locator('[data-test=run-chart] canvas').count()) > 0, 'uPlot canvases inside run-chart');
    assert((await page.locator('[data-test=run-chart] .error-box').count()) === 0, 'the metrics load without error');
    await page.waitForFunction(() => document.querySelectorAll('[data-test=log-view] .log-line').length > 5, null, { timeout: 30000 });
    const text = await page.textContent('[data-test=log-view]');
    assert(/completed step: \d+/.test(text), 'MaxText-style step lines in the live log');
    await shot('run-live');
  });

  await test('the run finishes and its page shows the summary and checkpoints', async () => {
    await page.waitForSelector('.page-head .badge.state-succeeded', { timeout: 120000 });
    await page.reload();
    await page.waitForSelector('.card');
    // The summary (goodput) arrives by its own request after the run's row: wait for it
    // rather than read the cards once (a CI run read them in between).
    await page
      .waitForFunction(() => document.querySelector('.cards')?.textContent?.includes('Goodput'), null, { timeout: 30000 })
      .catch(() => {});
    const cards = await page.textContent('.cards');
    assert(cards.includes('Goodput'), 'goodput card');
    const chk = await page.locator('text=No checkpoint yet').count();
    assert(chk === 0, 'a 20-step checkpoint period must leave checkpoints');
    const timeline = await page.textContent('.timeline');
    assert(timeline.includes('succeeded') && !timeline.includes('Invalid'), `the timeline lists the state changes: ${timeline}`);
    await shot('run');
  });

  await test('cancel another run from its page', async () => {
    const run = await podium.call('POST', '/api/v1/runs', { name: 'web-to-cancel', cluster: 'web', dataset: 'web-text', model: 'reference-tiny', workload: 'reference', steps: 50, per_device_batch_size: 4, max_target_length: 128, priority: 'low' });
    await page.goto(`${podium.base}/runs/${run.id}`);
    await page.click('button:has-text("Cancel run")');
    await page.waitForSelector('.page-head .badge.state-cancelled', { timeout: 60000 });
    const after = await podium.call('GET', `/api/v1/runs/${run.id}`);
    assert(after.state === 'cancelled', `the server says ${after.state}`);
  });

  await test('a finished run is deleted from its page; a member who does not own it gets no delete button', async () => {
    const run = await podium.call('POST', '/api/v1/runs', { name: 'web-to-delete', cluster: 'web', dataset: 'web-text', model: 'reference-tiny', workload: 'reference', steps: 50, per_device_batch_size: 4, max_target_length: 128, priority: 'low' });
    await page.goto(`${podium.base}/runs/${run.id}`);
    await page.waitForSelector('.page-head h1');
    assert(await page.locator('[data-test=delete-run]').count() === 0, 'no delete while the run is live');
    await podium.call('POST', `/api/v1/runs/${run.id}/cancel`, {});
    await page.waitForSelector('.page-head .badge.state-cancelled', { timeout: 60000 });
    const member = await podium.call('POST', '/api/v1/users', { username: 'web-run-reader', role: 'member' });
    const memberContext = await browser.newContext();
    try {
      const memberPage = await memberContext.newPage();
      await memberPage.goto(`${podium.base}/login`);
      await memberPage.fill('[data-test=login-token]', member.token);
      await memberPage.click('[data-test=login-submit]');
      await memberPage.waitForURL(/\/runs/);
      await memberPage.goto(`${podium.base}/runs/${run.id}`);
      await memberPage.waitForSelector('.page-head .badge.state-cancelled');
      assert(await memberPage.locator('[data-test=delete-run]').count() === 0, 'no delete for a member who does not own the run');
    } finally {
      await memberContext.close();
    }
    const dialogs = [];
    const onDialog = (d) => dialogs.push(d.message());
    page.on('dialog', onDialog);
    try {
      await page.click('[data-test=delete-run]');
      await page.waitForURL(/\/runs$/);
    } finally {
      page.off('dialog', onDialog);
    }
    assert(dialogs[0]?.includes('checkpoint files in storage are not touched'), `the confirmation says what goes: ${dialogs[0]}`);
    const res = await fetch(`${podium.base}/api/v1/runs/${run.id}`, { headers: { Authorization: `Bearer ${podium.token}` } });
    assert(res.status === 404, `deleted on the server: ${res.status}`);
  });

  await test('the runs list filters by state and shows live badges', async () => {
    await page.goto(`${podium.base}/runs?state=succeeded`);
    await page.waitForSelector('[data-test=runs-table]');
    const rows = await page.locator('[data-test=runs-table] tbody tr').count();
    assert(rows === 1, `one succeeded run, saw ${rows}`);
    await page.goto(`${podium.base}/runs`);
    await page.waitForSelector('[data-test=runs-table] .badge.state-cancelled');
    await shot('runs');
  });

  await newRunFormTests({ page, podium, test, assert, shot });

  await test('import two MaxText logs and compare them with the right ratios', async () => {
    const logs = [
      { name: 'llama-v6e-8', accelerator: 'v6e-8', log: maxtextLog({ seconds: 2.0, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 20, capacityGb: 31.25 }) },
      { name: 'llama-tpu7x-8', accelerator: 'tpu7x-8', log: maxtextLog({ seconds: 0.5, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 40, capacityGb: 94.75 }) },
    ];
    const ids = [];
    for (const l of logs) {
      await page.goto(`${podium.base}/import`);
      await page.fill('input[name=name]', l.name);
      await page.fill('input[name=accelerator]', l.accelerator);
      await page.fill('input[name=model]', 'llama3-8b');
      await page.fill('textarea[name=log]', l.log);
      if (ids.length === 0) await shot('import');
      await page.click('button[type=submit]');
      await page.waitForURL(/\/runs\/run_/);
      ids.push(page.url().split('/runs/')[1]);
    }
    state.imported = ids;
    await page.goto(`${podium.base}/compare?runs=${ids.join(',')}&baseline=${ids[0]}`);
    await page.waitForSelector('[data-test=compare-table] tbody tr');
    const cell = async (id, metric) => Number(await page.getAttribute(`[data-test=compare-table] tr[data-run-id="${id}"] td[data-metric=${metric}]`, 'data-ratio'));
    const api = await podium.call('GET', `/api/v1/compare?runs=${ids.join(',')}&baseline=${ids[0]}`);
    const rowOf = (id) => api.rows.find((r) => r.run_id === id);
    const a = rowOf(ids[0]);
    const b = rowOf(ids[1]);
    assert(near(a.step_seconds, 2.0) && near(b.step_seconds, 0.5), `steady step times ${a.step_seconds} and ${b.step_seconds}`);
    assert(near(await cell(ids[1], 'step_seconds'), 0.25), 'step time ratio 0.5 / 2.0');
    assert(near(await cell(ids[1], 'tflops_per_device'), 4.0), 'TFLOP/s ratio 4');
    assert(near(await cell(ids[1], 'tokens_per_second_per_device'), 4.0), 'tokens/s ratio 4');
    assert(near(await cell(ids[1], 'mfu'), b.mfu / a.mfu), 'MFU ratio as the API computes it');
    const shown = async (id, metric) => (await page.textContent(`[data-test=compare-table] tr[data-run-id="${id}"] td[data-metric=${metric}] .ratio`)).trim();
    assert(await shown(ids[1], 'step_seconds') === '4.0× faster', 'a step time a quarter of the baseline reads 4.0× faster');
    assert(await shown(ids[1], 'tflops_per_device') === '4.0×', 'TFLOP/s ratio shown as 4.0×');
    await shot('compare');
  });

  // Issue 26 point 3: the seed's tpu7x 2x2x1 run at 0.05 % MFU (0.577 TFLOP/s/device) against the
  // planner's 346.05 (30 % MFU for a MoE model): its page's badge and its compare row say
  // underperforming with both figures; the healthy import beside it says nothing.
  await test('an underperforming run shows both figures on its page and in compare', async () => {
    const lines = [];
    for (let s = 0; s < 20; s++) {
      lines.push(`completed step: ${s}, seconds: ${s === 0 ? '400.0' : '312.0'}, TFLOP/s/device: ${s === 0 ? '0.4' : '0.577'}, Tokens/s/device: 13.1, total_weights: 4096, loss: 9.8`);
    }
    const run = await podium.call('POST', '/api/v1/runs/import', { name: 'seed-2x2x1', accelerator: 'tpu7x-2x2x1', num_slices: 1, model: 'almodel-8b', config: {}, log: lines.join('\n') + '\n' });
    assert(run.flags?.underperforming, `the import's answer is flagged: ${JSON.stringify(run.flags)}`);
    await page.goto(`${podium.base}/runs/${run.id}`);
    const badge = page.locator('[data-test=underperforming-badge]');
    await badge.waitFor();
    const text = (await badge.textContent()).trim();
    assert(text === 'underperforming · 0.577 TFLOP/s/device measured, 346.1 expected by the plan (0.00167×)', `badge text: ${text}`);
    assert(Number(await badge.getAttribute('data-tflops')) === 0.577, 'measured figure');
    assert(near(Number(await badge.getAttribute('data-expected')), 0.30 * 1153.5), 'expected figure');
    await shot('run-underperforming');
    await page.goto(`${podium.base}/runs/${state.imported[1]}`);
    await page.waitForSelector('[data-test=plan-check]');
    assert(await page.locator('[data-test=underperforming-badge]').count() === 0, 'a run near its plan has no badge');
    await page.goto(`${podium.base}/compare?runs=${state.imported[1]},${run.id}&baseline=${state.imported[1]}`);
    const flagged = page.locator(`[data-test=compare-table] tr[data-run-id="${run.id}"] td[data-metric=plan_check]`);
    await flagged.waitFor();
    assert(await flagged.getAttribute('data-verdict') === 'underperforming', 'the compare row is flagged');
    const cell = (await flagged.textContent()).trim();
    assert(cell.includes('underperforming: 0.577 of 346.1 expected'), `compare cell: ${cell}`);
    const other = page.locator(`[data-test=compare-table] tr[data-run-id="${state.imported[1]}"] td[data-metric=plan_check]`);
    assert(await other.getAttribute('data-verdict') === 'as_planned', 'the healthy run is as planned');
  });

  await test('deep links survive a reload', async () => {
    for (const path of [`/runs/${state.runId}`, `/compare?runs=${state.imported.join(',')}`, '/clusters/web', '/tokens']) {
      await page.goto(podium.base + path);
      await page.reload();
      await page.waitForSelector('main h1');
      assert(!page.url().includes('/login'), `${path} should stay signed in across a reload`);
      assert(new URL(page.url()).pathname === path.split('?')[0], `${path} kept its URL`);
    }
    const res = await page.request.get(`${podium.base}/runs/${state.runId}`);
    assert(res.status() === 200 && (res.headers()['content-security-policy'] || '').includes("default-src 'self'"), 'the shell carries the CSP');
  });

  await test('clusters, datasets and tokens pages', async () => {
    await page.goto(`${podium.base}/clusters`);
    await page.waitForSelector('table.data');
    await shot('clusters');
    await page.goto(`${podium.base}/clusters/web`);
    await page.waitForSelector('.host.healthy');
    assert((await page.locator('.host.healthy').count()) === 2, 'two healthy hosts');
    await shot('cluster');
    await page.goto(`${podium.base}/datasets`);
    await page.waitForSelector('table.data');
    await shot('datasets');
    await page.goto(`${podium.base}/tokens`);
    await page.fill('form.inline input', 'browser-test');
    await page.click('form.inline button[type=submit]');
    await page.waitForSelector('code.secret');
    const secret = await page.textContent('code.secret');
    const check = await fetch(`${podium.base}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${secret}` } });
    assert(check.status === 200, 'the created token works');
    await page.click('tr:has-text("browser-test") button:has-text("Revoke")');
    await page.waitForSelector('tr:has-text("browser-test") >> text=revoked');
    const again = await fetch(`${podium.base}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${secret}` } });
    assert(again.status === 401, 'a revoked token is refused');
    await shot('tokens');
  });

  // The server's own answer to a body, for comparing with what the page shows (never stored:
  // every body sent this way is one the server refuses).
  const refusal = async (method, path, body) => {
    const res = await fetch(podium.base + path, { method, headers: { Authorization: `Bearer ${podium.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    assert(!res.ok, `${method} ${path} ${JSON.stringify(body)} should be refused, got ${res.status}`);
    return { status: res.status, ...(await res.json()) };
  };
  const patches = [];
  page.on('request', (r) => { if (r.method() === 'PATCH' && r.url().includes('/api/v1/clusters/')) patches.push(JSON.parse(r.postData() || '{}')); });
  const lastPatch = async (n) => {
    for (let i = 0; i < 50 && patches.length < n; i++) await page.waitForTimeout(100);
    assert(patches.length === n, `expected ${n} PATCH requests, saw ${patches.length}`);
    return patches[n - 1];
  };

  await test('an admin creates a cluster through the form and lands on its page', async () => {
    await page.goto(`${podium.base}/clusters`);
    await page.click('button:has-text("New cluster")');
    await page.waitForSelector('[data-test=cluster-form]');
    const form = '[data-test=cluster-form]';
    // The accelerator suggestions are the server's catalog, each with its chips, devices, hosts.
    await page.waitForSelector('[data-test=accelerator-catalog] option[value="tpu7x-64"]', { state: 'attached' });
    const catalog = await podium.call('GET', '/api/v1/accelerators');
    const offered = await page.$$eval('[data-test=accelerator-catalog] option', (os) => os.map((o) => o.value));
    assert(JSON.stringify(offered) === JSON.stringify(catalog.items.map((a) => a.type)), `the catalog is offered: ${offered.length} of ${catalog.items.length}`);
    const tpu7x64 = await page.textContent('[data-test=accelerator-catalog] option[value="tpu7x-64"]');
    assert(tpu7x64 === '2x4x4: 32 chips, 64 devices, 8 hosts', `tpu7x-64 described: ${tpu7x64}`);
    await page.fill(`${form} input[name=name]`, 'web-v5p');
    await page.fill(`${form} input[name=accelerator]`, 'v5p-2x2x2');
    await page.fill(`${form} input[name=num_slices]`, '2');
    await page.selectOption(`${form} select[name=capacity]`, 'spot');
    await page.fill(`${form} input[name=zone]`, 'us-east5-a');
    await page.fill(`${form} input[name=price_per_chip_hour]`, '4.2');
    await page.fill(`${form} textarea[name=labels]`, 'team=llm\npool=v5p');
    await shot('cluster-new');
    await page.click(`${form} button[type=submit]`);
    await page.waitForURL(/\/clusters\/web-v5p$/);
    await page.waitForSelector('main h1:has-text("web-v5p")');
    const c = await podium.call('GET', '/api/v1/clusters/web-v5p');
    assert(c.accelerator.family === 'v5p' && c.accelerator.topology === '2x2x2', `accelerator ${JSON.stringify(c.accelerator)}`);
    assert(c.num_slices === 2 && c.capacity === 'spot' && c.zone === 'us-east5-a' && c.price_per_chip_hour === 4.2, `stored ${JSON.stringify(c)}`);
    assert(c.labels.team === 'llm' && c.labels.pool === 'v5p' && Object.keys(c.labels).length === 2, `labels ${JSON.stringify(c.labels)}`);
    assert(c.executor.kind === 'agent', 'the default executor');
    assert(await page.inputValue('[data-test=cluster-settings] input[name=price_per_chip_hour]') === '4.2', 'the settings form shows the price');
    assert((await page.textContent('.page-head')).includes('× 2 slices'), 'the header shows the slices');
  });

  await test('a value the server refuses shows its error beside the form and creates nothing', async () => {
    const before = (await podium.call('GET', '/api/v1/clusters')).items.length;
    await page.goto(`${podium.base}/clusters`);
    await page.click('button:has-text("New cluster")');
    const form = '[data-test=cluster-form]';
    for (const bad of [{ accelerator: 'tpu9-7', num_slices: '1' }, { accelerator: 'cpu-2', num_slices: '0' }]) {
      await page.fill(`${form} input[name=name]`, 'web-bad');
      await page.fill(`${form} input[name=accelerator]`, bad.accelerator);
      await page.fill(`${form} input[name=num_slices]`, bad.num_slices);
      await page.click(`${form} button[type=submit]`);
      const server = await refusal('POST', '/api/v1/clusters', { name: 'web-bad', accelerator: bad.accelerator, num_slices: Number(bad.num_slices), capacity: 'on-demand', labels: {} });
      assert(server.detail, `the server explains ${JSON.stringify(server)}`);
      await page.waitForFunction(({ sel, detail }) => document.querySelector(sel)?.textContent?.includes(detail), { sel: `${form} .error-box`, detail: server.detail });
      const shown = await page.textContent(`${form} .error-box`);
      assert(shown.includes(String(server.status)), `the status ${server.status} is shown: ${shown}`);
      for (const f of server.errors ?? []) assert(shown.includes(f.field) && shown.includes(f.message), `field error ${f.field}: ${f.message} shown in ${shown}`);
      assert(new URL(page.url()).pathname === '/clusters', 'stays on the form');
      if (bad.accelerator === 'tpu9-7') await shot('cluster-new-refused');
    }
    const after = await podium.call('GET', '/api/v1/clusters');
    assert(after.items.length === before && !after.items.some((c) => c.name === 'web-bad'), 'no cluster was created');
  });

  await test('an admin changes the price and a label; only they are sent and they persist', async () => {
    await page.goto(`${podium.base}/clusters/web-v5p`);
    const settings = '[data-test=cluster-settings]';
    await page.waitForSelector(`${settings} input[name=price_per_chip_hour]`);
    await page.fill(`${settings} input[name=price_per_chip_hour]`, '5.75');
    await page.fill(`${settings} textarea[name=labels]`, 'team=research\npool=v5p');
    const n = patches.length;
    await page.click(`${settings} button:has-text("Save settings")`);
    await page.waitForSelector(`${settings} [role=status]:has-text("Saved")`);
    const sent = await lastPatch(n + 1);
    assert(JSON.stringify(Object.keys(sent).sort()) === '["labels","price_per_chip_hour"]', `PATCH carried only the changes: ${JSON.stringify(sent)}`);
    const c = await podium.call('GET', '/api/v1/clusters/web-v5p');
    assert(c.price_per_chip_hour === 5.75 && c.labels.team === 'research' && c.labels.pool === 'v5p', `stored ${JSON.stringify(c)}`);
    await page.reload();
    await page.waitForSelector(`${settings} input[name=price_per_chip_hour]`);
    assert(await page.inputValue(`${settings} input[name=price_per_chip_hour]`) === '5.75', 'the price after a reload');
    assert((await page.inputValue(`${settings} textarea[name=labels]`)).split('\n').includes('team=research'), 'the label after a reload');
    assert((await page.textContent('.cards')).includes('$5.75/chip-h'), 'the price card follows');
    // An emptied price is null: the price is cleared.
    await page.fill(`${settings} input[name=price_per_chip_hour]`, '');
    await page.click(`${settings} button:has-text("Save settings")`);
    await page.waitForSelector(`${settings} [role=status]:has-text("Saved")`);
    assert(JSON.stringify(await lastPatch(n + 2)) === '{"price_per_chip_hour":null}', 'an emptied price is sent as null');
    assert((await podium.call('GET', '/api/v1/clusters/web-v5p')).price_per_chip_hour === null, 'the price is cleared');
    // A slice count the server refuses: its error is shown, nothing changes.
    await page.fill(`${settings} input[name=num_slices]`, '0');
    await page.click(`${settings} button:has-text("Save settings")`);
    const server = await refusal('PATCH', '/api/v1/clusters/web-v5p', { num_slices: 0 });
    await page.waitForFunction(({ sel, detail }) => document.querySelector(sel)?.textContent?.includes(detail), { sel: `${settings} .error-box`, detail: server.detail });
    assert((await podium.call('GET', '/api/v1/clusters/web-v5p')).num_slices === 2, 'the slices are unchanged');
    await shot('cluster-settings');
  });

  await test('an admin edits the launch policy and the page shows the policy in force', async () => {
    await page.goto(`${podium.base}/clusters/web-v5p`);
    const editor = '[data-test=launch-policy-editor]';
    await page.waitForSelector(editor);
    assert((await page.textContent('[data-test=launch-policy] [data-key=command_roles]')).trim() === 'admin', 'the default: only admins run commands');
    assert(!(await page.isChecked(`${editor} input[name=command_roles][value=member]`)), 'member unticked by default');
    assert(await page.isChecked(`${editor} input[name=code_bundle_roles][value=member]`), 'members may send code bundles by default');
    // A line that is neither a module nor an absolute path is refused before anything is sent.
    await page.fill(`${editor} textarea[name=entrypoints]`, 'train sh');
    await page.waitForSelector(`${editor} small.bad:has-text("line 1")`);
    assert(await page.isDisabled(`${editor} button[type=submit]`), 'save is disabled while a line is bad');
    await page.fill(`${editor} textarea[name=entrypoints]`, '/opt/maxtext/train.sh');
    await page.check(`${editor} input[name=command_roles][value=member]`);
    const n = patches.length;
    await page.click(`${editor} button[type=submit]`);
    await page.waitForSelector(`${editor} [role=status]:has-text("Saved")`);
    const sent = await lastPatch(n + 1);
    assert(JSON.stringify(sent) === JSON.stringify({ launch_policy: { command_roles: ['admin', 'member'], entrypoints: ['/opt/maxtext/train.sh'], code_bundle_roles: ['admin', 'member'] } }), `the whole policy and nothing else: ${JSON.stringify(sent)}`);
    const c = await podium.call('GET', '/api/v1/clusters/web-v5p');
    assert(JSON.stringify(c.launch_policy.command_roles) === '["admin","member"]', `command_roles ${JSON.stringify(c.launch_policy)}`);
    assert(JSON.stringify(c.launch_policy.entrypoints) === '["/opt/maxtext/train.sh"]', `entrypoints ${JSON.stringify(c.launch_policy)}`);
    assert(JSON.stringify(c.launch_policy.code_bundle_roles) === '["admin","member"]', `code_bundle_roles ${JSON.stringify(c.launch_policy)}`);
    assert((await page.textContent('[data-test=launch-policy] [data-key=command_roles]')).trim() === 'admin, member', 'the policy in force shows members');
    assert((await page.textContent('[data-test=launch-policy] [data-key=entrypoints]')).includes('/opt/maxtext/train.sh'), 'the policy in force shows the entrypoint');
    await page.reload();
    await page.waitForSelector(editor);
    assert(await page.isChecked(`${editor} input[name=command_roles][value=member]`), 'member ticked after a reload');
    assert(await page.inputValue(`${editor} textarea[name=entrypoints]`) === '/opt/maxtext/train.sh', 'the entrypoint after a reload');
    await shot('cluster-launch-policy');
  });

  await test('delete is refused while runs refer to a cluster and done otherwise', async () => {
    const dialogs = [];
    const onDialog = (d) => dialogs.push(d.message());
    page.on('dialog', onDialog);
    try {
      await page.goto(`${podium.base}/clusters/web`);
      await page.click('[data-test=delete-cluster]');
      await page.waitForSelector('.page-head .error-box');
      assert((await page.textContent('.page-head .error-box')).includes('409'), 'a 409 for a cluster with runs');
      assert(dialogs[0]?.includes('refers to it'), `the confirmation says what happens to runs: ${dialogs[0]}`);
      assert((await podium.call('GET', '/api/v1/clusters/web')).name === 'web', 'the cluster is still there');
      await page.goto(`${podium.base}/clusters/web-v5p`);
      await page.click('[data-test=delete-cluster]');
      await page.waitForURL(/\/clusters$/);
      const res = await fetch(`${podium.base}/api/v1/clusters/web-v5p`, { headers: { Authorization: `Bearer ${podium.token}` } });
      assert(res.status === 404, `deleted: ${res.status}`);
    } finally {
      page.off('dialog', onDialog);
    }
  });

  await test('sign out ends the session', async () => {
    await page.click('button:has-text("Sign out")');
    await page.waitForSelector('[data-test=login-token]');
    await page.goto(`${podium.base}/runs`);
    await page.waitForSelector('[data-test=login-token]');
  });

  await test('a member sees clusters read-only: no new-cluster form, settings or policy editors, no delete', async () => {
    const member = await podium.call('POST', '/api/v1/users', { username: 'web-member', role: 'member' });
    await page.fill('[data-test=login-token]', member.token);
    await page.click('[data-test=login-submit]');
    await page.waitForURL(/\/runs$/);
    await page.goto(`${podium.base}/clusters`);
    await page.waitForSelector('table.data');
    assert((await page.locator('button:has-text("New cluster")').count()) === 0, 'no New cluster button');
    await page.goto(`${podium.base}/clusters/web`);
    await page.waitForSelector('[data-test=launch-policy]');
    assert((await page.locator('[data-test=launch-policy-editor]').count()) === 0, 'no launch policy editor');
    assert((await page.locator('[data-test=cluster-settings] input, [data-test=cluster-settings] textarea').count()) === 0, 'settings are read-only');
    assert((await page.textContent('[data-test=cluster-settings]')).includes('$0.50'), 'the settings show the price');
    assert((await page.locator('[data-test=delete-cluster]').count()) === 0, 'no Delete button');
    assert((await page.textContent('[data-test=launch-policy] [data-key=command_roles]')).trim() === 'admin', 'the policy in force, read-only');
    await shot('cluster-member');
    await page.click('button:has-text("Sign out")');
    await page.waitForSelector('[data-test=login-token]');
  });

  // ---- users, datasets and worker tokens (admins and members through the dashboard) ----
  const signIn = async (token) => {
    await page.goto(`${podium.base}/login`);
    await page.fill('[data-test=login-token]', token);
    await page.click('[data-test=login-submit]');
    await page.waitForURL(/\/runs$/);
  };
  const signOut = async () => {
    await page.click('button:has-text("Sign out")');
    await page.waitForSelector('[data-test=login-token]');
  };
  // What the server answers a token, or a username and password, now.
  const statusWithToken = async (token, path = '/api/v1/auth/me', init = {}) =>
    (await fetch(podium.base + path, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}) } })).status;
  const statusOfLogin = async (username, password) =>
    (await fetch(`${podium.base}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password }) })).status;
  const fieldMessage = (form, name) => `${form} label:has([name=${name}]) small.bad`;
  const waitForText = (sel, text) => page.waitForFunction(({ sel, text }) => document.querySelector(sel)?.textContent?.includes(text), { sel, text });
  const until = async (what, check, ms = 10000) => {
    const end = Date.now() + ms;
    for (;;) {
      if (await check()) return;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await page.waitForTimeout(200);
    }
  };

  await test('an admin creates a user on /users; a name the server refuses shows its error by the field', async () => {
    await signIn(podium.token);
    await page.click('nav.top a[href="/users"]');
    await page.waitForSelector('[data-test=users-table] tr[data-user=admin]');
    await page.click('button:has-text("New user")');
    const form = '[data-test=user-form]';
    await page.fill(`${form} input[name=username]`, 'web ada!');
    await page.click(`${form} button[type=submit]`);
    const server = await refusal('POST', '/api/v1/users', { username: 'web ada!', role: 'member' });
    const field = (server.errors ?? []).find((e) => e.field === 'username');
    assert(field, `the server names the username: ${JSON.stringify(server)}`);
    await waitForText(fieldMessage(form, 'username'), field.message);
    assert((await page.textContent(`${form} .error-box`)).includes(String(server.status)), 'the status is shown');
    // Two different passwords are refused before anything is sent.
    await page.fill(`${form} input[name=username]`, 'web-ada');
    await page.selectOption(`${form} select[name=role]`, 'viewer');
    await page.fill(`${form} input[name=password]`, 'correct-horse-1');
    await page.fill(`${form} input[name=password_again]`, 'correct-horse-2');
    await page.waitForSelector(`${fieldMessage(form, 'password_again')}:has-text("does not match")`);
    assert(await page.isDisabled(`${form} button[type=submit]`), 'create is disabled while the passwords differ');
    await page.fill(`${form} input[name=password_again]`, 'correct-horse-1');
    await shot('user-new');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('[data-test=user-token]');
    const token = (await page.textContent('[data-test=user-token]')).trim();
    assert(token.startsWith('pdm_'), `the first API token is shown: ${token}`);
    await page.waitForSelector('[data-test=users-table] tr[data-user=web-ada]');
    assert(await page.inputValue('tr[data-user=web-ada] select[name=role]') === 'viewer', 'the row shows the role');
    const u = await podium.call('GET', '/api/v1/users/web-ada');
    assert(u.role === 'viewer' && u.disabled === false, `stored ${JSON.stringify(u)}`);
    assert(!(await podium.call('GET', '/api/v1/users')).items.some((x) => x.username === 'web ada!'), 'the refused name was not created');
    assert(await statusWithToken(token) === 200, 'the shown token works');
    assert(await statusOfLogin('web-ada', 'correct-horse-1') === 200, 'the password signs in');
    // The admin's own row cannot demote or disable itself (the server would answer 409).
    assert(await page.isDisabled('tr[data-user=admin] select[name=role]'), 'own role fixed');
    assert(await page.isDisabled('tr[data-user=admin] [data-test=toggle-disabled]'), 'own account cannot be disabled');
    state.ada = { id: u.id, token };
    await shot('users');
  });

  await test("an admin changes a user's role, disables them (token and password refused), enables them and sets a password", async () => {
    const { token } = state.ada;
    await page.goto(`${podium.base}/users`);
    const row = 'tr[data-user=web-ada]';
    await page.waitForSelector(row);
    await page.selectOption(`${row} select[name=role]`, 'member');
    await until('the role to be member', async () => (await podium.call('GET', '/api/v1/users/web-ada')).role === 'member');
    await page.reload();
    await page.waitForSelector(row);
    assert(await page.inputValue(`${row} select[name=role]`) === 'member', 'the new role after a reload');
    assert((await (await fetch(`${podium.base}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${token}` } })).json()).role === 'member', 'the token carries the new role');

    await page.click(`${row} [data-test=toggle-disabled]`);
    await page.waitForSelector(`${row} td[data-key=state]:has-text("disabled")`);
    assert((await podium.call('GET', '/api/v1/users/web-ada')).disabled === true, 'disabled on the server');
    assert(await statusWithToken(token) === 401, 'the disabled user\u2019s token is refused');
    assert(await statusOfLogin('web-ada', 'correct-horse-1') === 401, 'the disabled user\u2019s sign-in is refused');
    await shot('users-disabled');

    await page.click(`${row} [data-test=toggle-disabled]:has-text("Enable")`);
    await page.waitForSelector(`${row} td[data-key=state]:has-text("active")`);
    assert(await statusWithToken(token) === 200, 'enabled again: the token works');

    await page.click(`${row} [data-test=set-password]`);
    const pw = '[data-test=password-form]';
    await page.fill(`${pw} input[name=new_password]`, 'battery-staple-3');
    await page.fill(`${pw} input[name=new_password_again]`, 'battery-staple-3');
    await page.click(`${pw} button[type=submit]`);
    await page.waitForSelector(pw, { state: 'detached' });
    assert(await statusOfLogin('web-ada', 'battery-staple-3') === 200, 'the new password signs in');
    assert(await statusOfLogin('web-ada', 'correct-horse-1') === 401, 'the old one no longer does');
  });

  await test('an admin registers a dataset through the form and it shows in the table', async () => {
    await page.goto(`${podium.base}/datasets`);
    await page.click('button:has-text("Register dataset")');
    const form = '[data-test=dataset-form]';
    await page.fill(`${form} input[name=name]`, 'web-c4');
    await page.fill(`${form} input[name=uri]`, 'gs://web-bucket/c4/en/');
    await page.selectOption(`${form} select[name=format]`, 'arrayrecord');
    await page.fill(`${form} input[name=records]`, '1,000');
    await page.fill(`${form} input[name=tokens]`, '2,000,000');
    await shot('dataset-new');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('[data-test=datasets-table] tr[data-dataset=web-c4]');
    assert(await page.locator(form).count() === 0, 'the form closes');
    const row = await page.textContent('tr[data-dataset=web-c4]');
    assert(row.includes('gs://web-bucket/c4/en/') && row.includes('arrayrecord') && row.includes('2,000,000'), `the row: ${row}`);
    const d = await podium.call('GET', '/api/v1/datasets/web-c4');
    assert(d.uri === 'gs://web-bucket/c4/en/' && d.format === 'arrayrecord' && d.records === 1000 && d.tokens === 2000000 && d.bytes === null, `stored ${JSON.stringify(d)}`);
    await shot('dataset-registered');
  });

  await test('a dataset the server refuses shows its error by the field and creates nothing; delete removes one', async () => {
    const before = (await podium.call('GET', '/api/v1/datasets')).items.map((d) => d.name).sort();
    await page.goto(`${podium.base}/datasets`);
    await page.click('button:has-text("Register dataset")');
    const form = '[data-test=dataset-form]';
    for (const uri of ['', '/nonexistent/podium-web.jsonl']) {
      await page.fill(`${form} input[name=name]`, 'web-bad');
      await page.fill(`${form} input[name=uri]`, uri);
      await page.click(`${form} button[type=submit]`);
      const server = await refusal('POST', '/api/v1/datasets', { name: 'web-bad', uri, format: 'jsonl' });
      const field = (server.errors ?? []).find((e) => e.field === 'uri');
      assert(field, `the server names the uri: ${JSON.stringify(server)}`);
      await waitForText(fieldMessage(form, 'uri'), field.message);
      await waitForText(`${form} .error-box`, String(server.status));
      if (uri === '') await shot('dataset-refused');
    }
    const after = (await podium.call('GET', '/api/v1/datasets')).items.map((d) => d.name).sort();
    assert(JSON.stringify(after) === JSON.stringify(before), `nothing was created: ${after}`);
    await page.click(`${form} button:has-text("Cancel")`);
    await page.click('tr[data-dataset=web-c4] [data-test=delete-dataset]');
    await page.waitForSelector('tr[data-dataset=web-c4]', { state: 'detached' });
    assert(await statusWithToken(podium.token, '/api/v1/datasets/web-c4') === 404, 'deleted on the server');
  });

  await test('an admin adds a model by uploading its MaxText config; the planner counts it; a bad config is refused by field', async () => {
    const file = resolve(new URL('../../../examples/configs/almodel-8b.yml', import.meta.url).pathname);
    await page.goto(`${podium.base}/models`);
    await page.waitForSelector('[data-test=models-table] tr[data-model=llama2-7b]');
    await page.click('button:has-text("Add model")');
    const form = '[data-test=model-form]';
    await page.setInputFiles(`${form} input[name=file]`, file);
    await page.waitForFunction((sel) => document.querySelector(sel)?.value.includes('base_emb_dim: 2560'), `${form} textarea[name=config]`);
    assert(await page.inputValue(`${form} input[name=name]`) === 'almodel-8b', 'the file names the model');
    await page.fill(`${form} input[name=name]`, 'web-almodel');
    await shot('model-new');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('[data-test=models-table] tr[data-model=web-almodel]');
    const stored = await podium.call('GET', '/api/v1/models/web-almodel');
    const builtin = await podium.call('GET', '/api/v1/models/almodel-8b');
    assert(!stored.builtin && stored.parameters.total === builtin.parameters.total, `counted like the catalog's ALModel: ${stored.parameters.total}`);
    assert((await page.textContent('[data-test=model-note]')).includes('18.9 B'), 'the note gives the parameter count');
    await shot('model-added');
    // A config without its sizes: the server's reason under the config field, nothing stored.
    await page.click('button:has-text("Add model")');
    await page.fill(`${form} input[name=name]`, 'web-bad-model');
    await page.fill(`${form} textarea[name=config]`, 'base_emb_dim: 512\nvocab_size: 100\n');
    await page.click(`${form} button[type=submit]`);
    const server = await refusal('POST', '/api/v1/models', { name: 'web-bad-model', yaml: 'base_emb_dim: 512\nvocab_size: 100\n' });
    const field = (server.errors ?? []).find((e) => e.field === 'yaml');
    assert(server.status === 422 && field, `the server names yaml: ${JSON.stringify(server)}`);
    await waitForText(`${form} label:has([name=config]) small.bad`, field.message);
    assert(await statusWithToken(podium.token, '/api/v1/models/web-bad-model') === 404, 'nothing stored');
    await page.click(`${form} button:has-text("Cancel")`);
    assert(await page.locator('tr[data-model=llama2-7b] [data-test=delete-model]').count() === 0, 'built-ins offer no delete');
    await page.click('tr[data-model=web-almodel] [data-test=delete-model]');
    await page.waitForSelector('tr[data-model=web-almodel]', { state: 'detached' });
    assert(await statusWithToken(podium.token, '/api/v1/models/web-almodel') === 404, 'deleted on the server');
  });

  await test('an admin makes a worker token on a cluster page, joins a host with the command shown, and revokes the token', async () => {
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
      assert(await statusWithToken(secret, '/api/v1/agent/register', register) === 401, 'the revoked token is refused');
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

  await test('a member sees no Users link or admin forms; registers and deletes only their own datasets; a viewer only reads', async () => {
    await signOut();
    const member = await podium.call('POST', '/api/v1/users', { username: 'web-member-2', role: 'member' });
    await signIn(member.token);
    assert(await page.locator('nav.top a[href="/users"]').count() === 0, 'no Users link for a member');
    await page.goto(`${podium.base}/users`);
    await page.waitForSelector('[data-test=users-forbidden]');
    assert(await page.locator('[data-test=users-table], [data-test=user-form]').count() === 0, 'no user list or form');
    await shot('users-member');
    await page.goto(`${podium.base}/clusters/web`);
    await page.waitForSelector('[data-test=launch-policy]');
    assert(await page.locator('[data-test=worker-tokens]').count() === 0, 'no worker tokens section');
    await page.goto(`${podium.base}/datasets`);
    await page.waitForSelector('tr[data-dataset=web-text]');
    assert(await page.locator('tr[data-dataset=web-text] [data-test=delete-dataset]').count() === 0, "no Delete on the admin's dataset");
    await page.click('button:has-text("Register dataset")');
    const form = '[data-test=dataset-form]';
    await page.fill(`${form} input[name=name]`, 'web-member-ds');
    await page.fill(`${form} input[name=uri]`, 'gs://web-bucket/member/');
    await page.fill(`${form} input[name=tokens]`, '5000');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('tr[data-dataset=web-member-ds] [data-test=delete-dataset]');
    assert((await podium.call('GET', '/api/v1/datasets/web-member-ds')).created_by === member.id, 'registered as the member');
    await page.click('tr[data-dataset=web-member-ds] [data-test=delete-dataset]');
    await page.waitForSelector('tr[data-dataset=web-member-ds]', { state: 'detached' });
    assert(await statusWithToken(podium.token, '/api/v1/datasets/web-member-ds') === 404, 'the member deleted their own dataset');
    await signOut();

    const viewer = await podium.call('POST', '/api/v1/users', { username: 'web-viewer', role: 'viewer' });
    await signIn(viewer.token);
    await page.goto(`${podium.base}/datasets`);
    await page.waitForSelector('tr[data-dataset=web-text]');
    assert(await page.locator('button:has-text("Register dataset"), [data-test=delete-dataset]').count() === 0, 'a viewer only reads');
    assert(await page.locator('nav.top a[href="/users"]').count() === 0, 'no Users link for a viewer');
    await signOut();
  });

  await test('no request left the server and the console stayed clean', async () => {
    assert(external.length === 0, `external requests: ${external.join(', ')}`);
    const relevant = consoleErrors.filter((e) => !/401|Failed to load resource/.test(e));
    assert(relevant.length === 0, `console errors: ${relevant.join(' | ')}`);
  });
} finally {
  stopJoined();
  await browser.close().catch(() => {});
  await podium.stop();
}

const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(`screenshots in ${out}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
