// Curation (issue 30.3): a run's notes and tags edited on its page survive a reload; a compare
// view saved under a name reloads at /compare/{id} as the same table (runs and baseline);
// projects group runs and the runs list filters by them.
import { test, assert } from './fixtures.mjs';
import { maxtextLog } from './maxtext_logs.mjs';

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

const importRun = (podium, name, seconds) => podium.call('POST', '/api/v1/runs/import', {
  name, accelerator: 'v5p-8', num_slices: 1, model: 'llama3-8b', config: {},
  log: maxtextLog({ seconds, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 20, capacityGb: 95 }),
});

test('notes and tags edited on a run page are there after a reload', async ({ page, podium, shot }) => {
  const run = await importRun(podium, 'curated-run', 2.0);
  await page.goto(`${podium.base}/runs/${run.id}`);
  const notes = page.locator('[data-test=run-notes]');
  await notes.locator('button:has-text("Add notes")').click();
  await notes.locator('textarea[name=notes]').fill('Diverged at step 2k.\nRetry with lr 1e-4.');
  await notes.locator('button:has-text("Save notes")').click();
  await notes.locator('.notes-text').waitFor();
  const tags = page.locator('[data-test=run-tags]');
  await tags.locator('button:has-text("Add tags")').click();
  await tags.locator('input[name=tags]').fill('sweep, lr-1e-4 sweep');
  await tags.locator('button:has-text("Save tags")').click();
  await tags.locator('[data-tag="lr-1e-4"]').waitFor();

  await page.reload();
  await page.locator('[data-test=run-notes] .notes-text').waitFor();
  const text = await page.locator('[data-test=run-notes] .notes-text').innerText();
  assert(text === 'Diverged at step 2k.\nRetry with lr 1e-4.', `notes after reload: ${JSON.stringify(text)}`);
  const shown = await page.locator('[data-test=run-tags] [data-tag]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tag')));
  assert(JSON.stringify(shown) === '["sweep","lr-1e-4"]', `tags after reload: ${shown}`);
  const stored = await podium.call('GET', `/api/v1/runs/${run.id}`);
  assert(stored.notes === text && stored.tags.join(',') === 'sweep,lr-1e-4', `stored: ${stored.notes} ${stored.tags}`);
  await shot('run-curation');

  // A tag removed with its ×.
  await page.click('[data-test=run-tags] button[aria-label="remove tag sweep"]');
  await page.locator('[data-test=run-tags] [data-tag=sweep]').waitFor({ state: 'detached' });
  assert((await podium.call('GET', `/api/v1/runs/${run.id}`)).tags.join(',') === 'lr-1e-4', 'the tag is gone');
});

test('a saved compare view reloads at /compare/{id} with the same runs and baseline', async ({ page, podium, shot }) => {
  const a = await importRun(podium, 'save-base', 2.0);
  const b = await importRun(podium, 'save-fast', 0.5);
  const c = await importRun(podium, 'save-slow', 4.0);
  await page.goto(`${podium.base}/compare?runs=${a.id},${b.id},${c.id}&baseline=${b.id}`);
  await page.waitForSelector('[data-test=compare-table] tbody tr');
  const table = async () => page.locator('[data-test=compare-table] tbody tr').evaluateAll((rows) => rows.map((r) => ({
    id: r.getAttribute('data-run-id'),
    base: r.querySelector('input[type=radio]').checked,
    step: r.querySelector('td[data-metric=step_seconds]')?.getAttribute('data-ratio'),
  })));
  const before = await table();
  await page.click('[data-test=save-compare]');
  await page.fill('input[name=compare-name]', 'v5p step times');
  await page.click('form[aria-label="Save view"] button[type=submit]');
  await page.waitForURL(/\/compare\/cmp_[0-9a-f]+$/);
  const url = page.url();

  await page.goto(url);
  await page.waitForSelector('[data-test=compare-table] tbody tr');
  const after = await table();
  assert(JSON.stringify(after) === JSON.stringify(before), `the same table: ${JSON.stringify(before)} vs ${JSON.stringify(after)}`);
  assert(after.map((r) => r.id).join(',') === [a.id, b.id, c.id].join(','), 'the same runs in order');
  assert(after.find((r) => r.base).id === b.id, 'the same baseline');
  assert((await page.textContent('[data-test=saved-compare-name]')).trim() === 'v5p step times', 'its name');
  const saved = await podium.call('GET', `/api/v1/compares/${url.split('/compare/')[1]}`);
  assert(saved.baseline === b.id && saved.runs.length === 3, `stored view: ${JSON.stringify(saved)}`);
  await shot('compare-saved');
});

test('a project groups runs: a run moves in from its page, the project page lists it and the runs list filters by it', async ({ page, podium, shot }) => {
  const inside = await importRun(podium, 'in-project', 2.0);
  await importRun(podium, 'outside-project', 2.0);
  await page.goto(`${podium.base}/projects`);
  await page.fill('[data-test=project-form] input[name=name]', 'llama-sweep');
  await page.fill('[data-test=project-form] input[name=description]', 'the lr sweep');
  await page.click('[data-test=project-form] button[type=submit]');
  await page.waitForURL(/\/projects\/llama-sweep$/);
  // Moved into it from the run's page.
  await page.goto(`${podium.base}/runs/${inside.id}`);
  await page.selectOption('[data-test=run-project] select', 'llama-sweep');
  await page.waitForSelector('[data-test=run-project] a[href="/projects/llama-sweep"]');
  assert((await podium.call('GET', `/api/v1/runs/${inside.id}`)).project === 'llama-sweep', 'stored');
  await page.click('[data-test=run-project] a');
  await page.waitForURL(/\/projects\/llama-sweep$/);
  await page.waitForSelector(`[data-test=project-runs] tr[data-run-id="${inside.id}"]`);
  assert(await page.locator('[data-test=project-runs] tbody tr').count() === 1, 'one run in the project');
  await shot('project');

  await page.goto(`${podium.base}/runs`);
  await page.waitForSelector('[data-test=runs-table]');
  await page.selectOption('select[name=project]', 'llama-sweep');
  await page.waitForURL(/project=llama-sweep/);
  await page.waitForFunction(() => document.querySelectorAll('[data-test=runs-table] tbody tr').length === 1);
  assert(await page.locator(`[data-test=runs-table] tr[data-run-id="${inside.id}"]`).count() === 1, 'the project run is listed');
  await page.reload();
  assert((await page.inputValue('select[name=project]')) === 'llama-sweep', 'the filter is in the URL');
});
