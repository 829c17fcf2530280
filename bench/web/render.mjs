// Dashboard at team scale (issue 31, point 5; not a test): in Chromium, how long after the
// navigation starts each page is usable, for a history of 100,000 runs (the runs page), a run of
// 1,000,000 steps (the run page) and a compare of 20 runs (the compare page).
//
// "Usable": the page's data-test hook shows its data (the runs table with a full first page; the
// run's four charts drawn with their points; the compare table with every run and its curves
// chart drawn), and a frame with it has been painted and the main thread has run a task after
// it (so clicks are handled). Measured in the page from its navigation start (performance.now(),
// i.e. the document request, the bundle, every API call and rendering included) by a probe that
// checks the hook on every animation frame. Each page is loaded `BENCH_REPEAT` times after one
// first load (reported on its own: it computes and stores summaries the later loads read);
// the figure is the median (p50) of the repeated loads.
//
// Writes bench/results/web_render.json. Usage: bench/web/run.sh (builds and starts what it needs).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { startPodium } from '../../web/tests/browser/podium.mjs';
import { seed } from './seed.mjs';
import { probe } from './usable.mjs';

// playwright-core is the dashboard's dev dependency: resolve it from web/node_modules.
const { chromium } = createRequire(new URL('../../web/package.json', import.meta.url))('playwright-core');

const RUNS = Number(process.env.BENCH_RUNS || 100000);
const STEPS = Number(process.env.BENCH_STEPS || 1000000);
const COMPARED = Number(process.env.BENCH_COMPARED || 20);
const COMPARED_STEPS = Number(process.env.BENCH_COMPARED_STEPS || 50000);
const REPEAT = Number(process.env.BENCH_REPEAT || 7);
const TARGET_MS = 1000;
const out = resolve(process.env.BENCH_OUTPUT || new URL('../results/web_render.json', import.meta.url).pathname);

const load = () => loadavg().map((x) => Math.round(x * 100) / 100);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

const podium = await startPodium({ workers: 0 });
let browser;
try {
  const loadBefore = load();
  const data = await seed(podium, { runs: RUNS, steps: STEPS, compared: COMPARED, comparedSteps: COMPARED_STEPS });
  console.log(`seeded ${RUNS} runs, a ${STEPS}-step run and ${COMPARED} runs of ${COMPARED_STEPS} steps in ${data.seconds.toFixed(1)} s`);

  browser = await chromium.launch({ executablePath: process.env.PODIUM_CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.addInitScript(probe);
  const page = await context.newPage();
  await page.goto(`${podium.base}/login`);
  await page.fill('[data-test=login-token]', podium.token);
  await page.click('[data-test=login-submit]');
  await page.waitForURL(/\/runs$/);

  // One load: navigation start to usable, and the page's slowest API answer for context.
  async function visit(path) {
    await page.goto(`${podium.base}${path}`);
    const usable = await page.waitForFunction(() => window.__podiumBenchUsableAt, null, { timeout: 300000 }).then((h) => h.jsonValue());
    const api = await page.evaluate(() => performance.getEntriesByType('resource')
      .filter((r) => r.name.includes('/api/v1/'))
      .map((r) => ({ path: new URL(r.name).pathname, ms: Math.round(r.responseEnd - r.requestStart), bytes: r.transferSize })));
    const slowest = api.reduce((a, b) => (b.ms > (a?.ms ?? -1) ? b : a), null);
    const sample = { usable_ms: Math.round(usable * 10) / 10, api_calls: api.length, api_bytes: api.reduce((s, r) => s + r.bytes, 0), slowest_api: slowest };
    console.log(`  ${path.slice(0, 60)}: ${sample.usable_ms} ms (slowest API ${slowest?.path} ${slowest?.ms} ms)`);
    return sample;
  }
  const pages = [
    { name: 'web_runs_page', path: '/runs', what: `runs page, ${RUNS} runs` },
    { name: 'web_run_page', path: `/runs/${data.longRun}`, what: `run page, ${STEPS} steps` },
    { name: 'web_compare_page', path: `/compare?runs=${data.compared.join(',')}`, what: `compare of ${COMPARED} runs of ${COMPARED_STEPS} steps` },
  ];
  const scenarios = [];
  for (const p of pages) {
    const first = await visit(p.path);
    const samples = [];
    for (let i = 0; i < REPEAT; i++) samples.push(await visit(p.path));
    const value = median(samples.map((s) => s.usable_ms));
    scenarios.push({ name: p.name, what: p.what, value, unit: 'ms to usable (p50)', target: TARGET_MS,
      meets: value < TARGET_MS, first_load: first, samples });
  }
  const result = {
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim(),
    date: new Date().toISOString(),
    machine: `${cpus().length} cores, ${cpus()[0].model}`,
    server_build: process.env.PODIUM_BENCH_SERVER_BUILD || process.env.PODIUM_BIN_DIR,
    loadavg_before: loadBefore,
    loadavg_after: load(),
    data: { runs: RUNS, steps: STEPS, compared: COMPARED, compared_steps: COMPARED_STEPS, seed_seconds: data.seconds },
    usable: 'the page\'s data-test hook shows its data, a frame with it is painted and a task ran after it; from navigation start',
    scenarios,
  };
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  console.log(`load average ${result.loadavg_before.join(' ')} before, ${result.loadavg_after.join(' ')} after`);
  for (const s of scenarios) {
    console.log(`${s.name} (${s.what}): p50 ${s.value.toFixed(0)} ms to usable over ${s.samples.length} loads ` +
      `(min ${Math.min(...s.samples.map((x) => x.usable_ms)).toFixed(0)}, max ${Math.max(...s.samples.map((x) => x.usable_ms)).toFixed(0)}; first load ${s.first_load.usable_ms.toFixed(0)} ms; ` +
      `slowest API ${s.samples.at(-1).slowest_api?.path} ${s.samples.at(-1).slowest_api?.ms} ms); target < ${s.target} ms: ${s.meets ? 'met' : 'MISSED'}`);
  }
} finally {
  await browser?.close().catch(() => {});
  await podium.stop();
}
