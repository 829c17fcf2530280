// Dashboard rendering benchmark (not a test): how long the runs page takes to render a page of a
// 10,000-run history, and the run page its charts for a run of 100,000 steps, each measured in
// Chromium from the end of the API response the page waits for to the first frame that shows
// the data. Writes bench/results/web_render.json. Usage: bench/web/run.sh
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startPodium } from '../../web/tests/browser/podium.mjs';
import { maxtextLog } from '../../web/tests/browser/maxtext_logs.mjs';

// playwright-core is the dashboard's dev dependency: resolve it from web/node_modules.
const { chromium } = createRequire(new URL('../../web/package.json', import.meta.url))('playwright-core');

const RUNS = Number(process.env.BENCH_RUNS || 10000);
const STEPS = Number(process.env.BENCH_STEPS || 100000);
const REPEAT = Number(process.env.BENCH_REPEAT || 5);
const out = resolve(new URL('../results/web_render.json', import.meta.url).pathname);

const podium = await startPodium({ workers: 0 });
const sql = (text) => execFileSync('psql', [podium.databaseUrl, '-q', '-v', 'ON_ERROR_STOP=1', '-c', text]);
let browser;
try {
  // One imported run gives a real run row, attempt and owner; SQL copies it 10,000 times and
  // gives it 100,000 steps of metrics (the API would take minutes to ingest as much).
  const seed = await podium.call('POST', '/api/v1/runs/import', {
    name: 'bench-seed', accelerator: 'v6e-8', num_slices: 1, model: 'llama3-8b',
    log: maxtextLog({ steps: 30, seconds: 2.0, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 20, capacityGb: 31.25 }),
  });
  const t0 = Date.now();
  sql(`INSERT INTO runs (id, name, owner_id, cluster_id, model, workload, spec, plan, state, last_step, imported, accelerator, num_slices, tags, created_at, finished_at)
       SELECT 'run_bench_' || g, 'bench-' || g, owner_id, NULL, model, workload, spec, plan,
              (ARRAY['succeeded','failed','cancelled','succeeded'])[1 + g % 4], 29, true, accelerator, num_slices,
              ARRAY['bench'], now() - make_interval(secs => g), now()
       FROM runs, generate_series(1, ${RUNS - 1}) g WHERE id = '${seed.id}'`);
  const attempt = (await podium.call('GET', `/api/v1/runs/${seed.id}/attempts`)).items[0];
  sql(`DELETE FROM metrics WHERE run_id = '${seed.id}'`);
  sql(`INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, tflops_per_device, tokens_per_second_per_device, total_weights, loss)
       SELECT '${seed.id}', '${attempt.id}', ${attempt.number}, g, 2.0 + 0.1 * sin(g / 50.0), 200 + 10 * cos(g / 70.0), 2048, 4096, 10.0 / (1 + g / 1000.0)
       FROM generate_series(0, ${STEPS - 1}) g`);
  sql(`UPDATE runs SET last_step = ${STEPS - 1}, spec = jsonb_set(spec, '{steps}', '${STEPS}') WHERE id = '${seed.id}'; ANALYZE`);
  const seedSeconds = (Date.now() - t0) / 1000;

  browser = await chromium.launch({ executablePath: process.env.PODIUM_CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  await page.goto(`${podium.base}/login`);
  await page.fill('[data-test=login-token]', podium.token);
  await page.click('[data-test=login-submit]');
  await page.waitForURL(/\/runs$/);

  // Time from the end of the named API response to the first animation frame where `ready`
  // holds, both on the page's performance clock.
  async function measure(path, apiPattern, ready) {
    await page.goto(`${podium.base}${path}`);
    const shown = await page.waitForFunction(ready, null, { polling: 'raf', timeout: 60000 }).then(() => page.evaluate(() => performance.now()));
    const timing = await page.evaluate((pattern) => {
      const e = performance.getEntriesByType('resource').filter((r) => new RegExp(pattern).test(r.name));
      const first = e[0];
      return first ? { responseEnd: first.responseEnd, server: first.responseStart - first.requestStart, bytes: first.transferSize } : null;
    }, apiPattern.source);
    return { render_ms: shown - timing.responseEnd, server_ms: timing.server, bytes: timing.bytes };
  }
  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
  const runsPage = [];
  const runPage = [];
  for (let i = 0; i < REPEAT; i++) {
    runsPage.push(await measure('/runs', /\/api\/v1\/runs\?/, () => document.querySelectorAll('[data-test=runs-table] tbody tr').length >= 50));
    runPage.push(await measure(`/runs/${seed.id}`, /\/metrics\?/, () => Number(document.querySelector('[data-test=run-chart]')?.getAttribute('data-points')) > 0 && document.querySelectorAll('[data-test=run-chart] canvas').length >= 4));
  }
  const result = {
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim(),
    machine: `${(await import('node:os')).cpus().length} cores, ${(await import('node:os')).cpus()[0].model}`,
    data: { runs: RUNS, steps: STEPS, seed_seconds: seedSeconds },
    scenarios: [
      { name: 'web_runs_page_render', value: median(runsPage.map((r) => r.render_ms)), unit: 'ms', target: 1000, samples: runsPage },
      { name: 'web_run_page_render', value: median(runPage.map((r) => r.render_ms)), unit: 'ms', target: 1000, samples: runPage },
    ],
  };
  for (const s of result.scenarios) s.meets = s.value < s.target;
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  for (const s of result.scenarios) console.log(`${s.name}: median ${s.value.toFixed(1)} ms after the data arrived (server ${median(s.samples.map((x) => x.server_ms)).toFixed(1)} ms, ${median(s.samples.map((x) => x.bytes))} bytes); target < ${s.target} ms: ${s.meets ? 'met' : 'MISSED'}`);
} finally {
  await browser?.close().catch(() => {});
  await podium.stop();
}
