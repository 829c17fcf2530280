// Runs on cluster web through the dashboard: the new-run form and its plan, the live run page,
// a finished run's summary, cancel, delete and the runs list. A run a test starts ends by the
// test's end (or, for the shared one, the worker's), so that the next run finds the slice free.
import { test as base, assert, referenceRun, cancelRun } from './fixtures.mjs';
import { maxtextLog } from './maxtext_logs.mjs';

// One reference run on cluster web for the live-page test and the finished-page test: a run
// takes a minute on two cores, most of it starting its ranks, and the two tests look at the same
// run at two moments, as a person would. Started by the first of them that runs (tests run in
// the order written, so the live test sees it live), ended with the worker; either test runs
// alone with a run of its own.
const test = base.extend({
  sharedRun: [async ({ podium }, use) => {
    const run = await referenceRun(podium, { name: 'web-reference-run', steps: 40, checkpoint_period: 20 });
    try {
      await use(run);
    } finally {
      await cancelRun(podium, run.id);
    }
  }, { scope: 'worker' }],
});

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

test('submit a reference run through the form after applying a proposed alternative', async ({ page, podium, shot }) => {
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
  assert(!(await page.isDisabled('button[type=submit]')), 'submit enabled once the plan is ok');
  await shot('new-run');
  await page.click('button[type=submit]');
  await page.waitForURL(/\/runs\/run_/);
  const id = page.url().split('/runs/')[1];
  const run = await podium.call('GET', `/api/v1/runs/${id}`);
  assert(run.spec.steps === steps && run.spec.checkpoint_period === 20, `the run has the form's steps and checkpoint period: ${JSON.stringify(run.spec)}`);
  await cancelRun(podium, id);
});

test('the run page charts gain points and the log streams live', async ({ page, podium, shot, sharedRun: run }) => {
  test.setTimeout(240000);
  await page.goto(`${podium.base}/runs/${run.id}`);
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

test('the run finishes and its page shows the summary and checkpoints', async ({ page, podium, shot, sharedRun: run }) => {
  test.setTimeout(240000);
  await page.goto(`${podium.base}/runs/${run.id}`);
  await page.waitForSelector('.page-head .badge.state-succeeded', { timeout: 180000 });
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

test('cancel another run from its page', async ({ page, podium }) => {
  const run = await referenceRun(podium, { name: 'web-to-cancel', steps: 50, priority: 'low' });
  await page.goto(`${podium.base}/runs/${run.id}`);
  await page.click('button:has-text("Cancel run")');
  await page.waitForSelector('.page-head .badge.state-cancelled', { timeout: 60000 });
  const after = await podium.call('GET', `/api/v1/runs/${run.id}`);
  assert(after.state === 'cancelled', `the server says ${after.state}`);
});

test('a finished run is deleted from its page; a member who does not own it gets no delete button', async ({ page, podium, browser }) => {
  const run = await referenceRun(podium, { name: 'web-to-delete', steps: 50, priority: 'low' });
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

test('the runs list filters by state and shows live badges', async ({ page, podium, shot }) => {
  // A succeeded run (an imported log) and a cancelled one, beside whatever earlier tests left.
  const log = maxtextLog({ seconds: 1.0, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 20, capacityGb: 31.25 });
  await podium.call('POST', '/api/v1/runs/import', { name: 'web-list-succeeded', accelerator: 'v6e-8', num_slices: 1, model: 'llama3-8b', config: {}, log });
  const cancelled = await referenceRun(podium, { name: 'web-list-cancelled', steps: 50, priority: 'low' });
  await podium.call('POST', `/api/v1/runs/${cancelled.id}/cancel`, {});
  const succeeded = (await podium.call('GET', '/api/v1/runs?state=succeeded')).items;
  assert(succeeded.length >= 1 && succeeded.every((r) => r.state === 'succeeded'), `the server lists the succeeded runs: ${JSON.stringify(succeeded.map((r) => r.state))}`);
  await page.goto(`${podium.base}/runs?state=succeeded`);
  await page.waitForSelector('[data-test=runs-table]');
  const rows = await page.locator('[data-test=runs-table] tbody tr').count();
  assert(rows === succeeded.length, `${succeeded.length} succeeded runs, saw ${rows}`);
  await page.goto(`${podium.base}/runs`);
  await page.waitForSelector('[data-test=runs-table] .badge.state-cancelled');
  await shot('runs');
});
