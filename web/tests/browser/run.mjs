// Browser tests: Debian's Chromium driven by playwright-core against a real podium-server with
// real podium-worker agents running the reference workload. Screenshots of every page go to
// web/test-results/ (not committed). Prints "N passed, N failed".
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startPodium } from './podium.mjs';
import { maxtextLog } from './maxtext_logs.mjs';

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

  await test('the runs list filters by state and shows live badges', async () => {
    await page.goto(`${podium.base}/runs?state=succeeded`);
    await page.waitForSelector('[data-test=runs-table]');
    const rows = await page.locator('[data-test=runs-table] tbody tr').count();
    assert(rows === 1, `one succeeded run, saw ${rows}`);
    await page.goto(`${podium.base}/runs`);
    await page.waitForSelector('[data-test=runs-table] .badge.state-cancelled');
    await shot('runs');
  });

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
    const tableText = await page.textContent('[data-test=compare-table]');
    assert(tableText.includes('0.25×') && tableText.includes('4.00×'), 'ratios shown as 0.25× and 4.00×');
    await shot('compare');
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

  await test('sign out ends the session', async () => {
    await page.click('button:has-text("Sign out")');
    await page.waitForSelector('[data-test=login-token]');
    await page.goto(`${podium.base}/runs`);
    await page.waitForSelector('[data-test=login-token]');
  });

  await test('no request left the server and the console stayed clean', async () => {
    assert(external.length === 0, `external requests: ${external.join(', ')}`);
    const relevant = consoleErrors.filter((e) => !/401|Failed to load resource/.test(e));
    assert(relevant.length === 0, `console errors: ${relevant.join(' | ')}`);
  });
} finally {
  await browser.close().catch(() => {});
  await podium.stop();
}

const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(`screenshots in ${out}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
