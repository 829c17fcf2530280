// Imported MaxText logs compared with the right ratios, and the plan check that flags a run far
// below what its plan expects.
import { test, assert, near } from './fixtures.mjs';
import { maxtextLog } from './maxtext_logs.mjs';

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

test('import two MaxText logs and compare them with the right ratios', async ({ page, podium, shot }) => {
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
test('an underperforming run shows both figures on its page and in compare', async ({ page, podium, shot }) => {
  // A healthy import beside it: the v7x log of the compare test.
  const healthy = await podium.call('POST', '/api/v1/runs/import', { name: 'llama-tpu7x-8', accelerator: 'tpu7x-8', num_slices: 1, model: 'llama3-8b', config: {}, log: maxtextLog({ seconds: 0.5, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 40, capacityGb: 94.75 }) });
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
  await page.goto(`${podium.base}/runs/${healthy.id}`);
  await page.waitForSelector('[data-test=plan-check]');
  assert(await page.locator('[data-test=underperforming-badge]').count() === 0, 'a run near its plan has no badge');
  await page.goto(`${podium.base}/compare?runs=${healthy.id},${run.id}&baseline=${healthy.id}`);
  const flagged = page.locator(`[data-test=compare-table] tr[data-run-id="${run.id}"] td[data-metric=plan_check]`);
  await flagged.waitFor();
  assert(await flagged.getAttribute('data-verdict') === 'underperforming', 'the compare row is flagged');
  const cell = (await flagged.textContent()).trim();
  assert(cell.includes('underperforming: 0.577 of 346.1 expected'), `compare cell: ${cell}`);
  const other = page.locator(`[data-test=compare-table] tr[data-run-id="${healthy.id}"] td[data-metric=plan_check]`);
  assert(await other.getAttribute('data-verdict') === 'as_planned', 'the healthy run is as planned');
});
