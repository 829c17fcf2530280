// The new-run form sends every run-spec field: each file of examples/ pasted into it comes out
// of it (in the plan request the form makes) unchanged, and a run whose env and entrypoint were
// typed into the form reaches the agents with them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { test, assert, cancelRun } from './fixtures.mjs';

const examplesDir = resolve(new URL('../../../examples', import.meta.url).pathname);

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

test('every example pasted into the new-run form comes out of it unchanged', async ({ page, podium, shot }) => {
  // What the form sends: every plan request it makes while the user edits.
  const planBodies = [];
  const onRequest = (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/v1/plan') planBodies.push(JSON.parse(r.postData() || '{}'));
  };
  const sentFor = async (name) => {
    for (let i = 0; i < 100; i++) {
      const body = planBodies.findLast((b) => b.name === name);
      if (body) return body;
      await page.waitForTimeout(100);
    }
    throw new Error(`the form asked for no plan of ${name}; it asked for ${planBodies.map((b) => b.name).join(', ')}`);
  };
  page.on('request', onRequest);
  try {
    await page.goto(`${podium.base}/runs/new`);
    await page.waitForSelector('[data-test=plan-panel]');
    await page.click('summary:has-text("Paste a run YAML")');
    const files = readdirSync(examplesDir).filter((f) => f.endsWith('.yaml')).sort();
    assert(files.length >= 5, `the examples: ${files}`);
    for (const file of files) {
      const text = readFileSync(join(examplesDir, file), 'utf8');
      const spec = parse(text);
      await page.fill('textarea[name=yaml]', text);
      await page.click('button:has-text("Load into the form")');
      const sent = await sentFor(spec.name);
      assert(isDeepStrictEqual(sent, spec), `${file}: the form sent ${JSON.stringify(sent)}\nthe file says ${JSON.stringify(spec)}`);
      assert(await page.inputValue('input[name=name]') === spec.name, `${file}: the form shows its name`);
      if (spec.env) assert(await page.inputValue('textarea[name=env]') === Object.entries(spec.env).map(([k, v]) => `${k}=${v}`).join('\n'), `${file}: the form shows its env`);
      if (file === 'maxtext-v6e-8-vm.yaml') await shot('new-run-pasted-example');
    }
  } finally {
    page.off('request', onRequest);
  }
});

test('a run submitted from the form reaches the agents with the env and entrypoint typed into it', async ({ page, podium, shot }) => {
  test.setTimeout(240000);
  const probe = 'typed in the form, a=b c';
  // A shell as the entrypoint: it prints the variable, its rank and the config file Podium
  // puts after the entrypoint, then ends (the training itself is not the point here).
  const entrypoint = ['/bin/sh', '-c', 'echo "form probe: $FORM_PROBE | second: $FORM_SECOND | rank $RANK | config file ${1##*/}"', 'form-entrypoint'];
  await page.goto(`${podium.base}/runs/new`);
  await page.waitForSelector('[data-test=plan-panel]');
  await page.fill('input[name=name]', 'web-form-env');
  await page.selectOption('select[name=cluster]', 'web');
  await page.selectOption('select[name=dataset]', 'web-text');
  await page.selectOption('select[name=model]', 'reference-tiny');
  await page.selectOption('select[name=workload]', 'reference');
  await page.fill('input[name=steps]', '10');
  await page.fill('input[name=per_device_batch_size]', '4');
  await page.fill('input[name=max_target_length]', '128');
  await page.fill('input[name=entrypoint]', JSON.stringify(entrypoint));
  await page.fill('textarea[name=env]', `FORM_PROBE=${probe}\nFORM_SECOND=2`);
  await page.fill('input[name=restart_on_exit_codes]', '75');
  await page.fill('input[name=max_restarts]', '0');
  await page.selectOption('select[name=priority]', 'very-high');
  await page.waitForFunction(() => document.querySelector('[data-test=plan-panel] .badge')?.textContent === 'ok', null, { timeout: 30000 });
  await shot('new-run-env-entrypoint');
  await page.click('button[type=submit]');
  await page.waitForURL(/\/runs\/run_/);
  const id = page.url().split('/runs/')[1];
  const run = await podium.call('GET', `/api/v1/runs/${id}`);
  assert(isDeepStrictEqual(run.spec.env, { FORM_PROBE: probe, FORM_SECOND: '2' }), `the stored env: ${JSON.stringify(run.spec.env)}`);
  assert(isDeepStrictEqual(run.spec.entrypoint, entrypoint), `the stored entrypoint: ${JSON.stringify(run.spec.entrypoint)}`);
  assert(run.priority === 'very-high' && isDeepStrictEqual(run.spec.restart_on_exit_codes, [75]) && run.spec.max_restarts === 0, `the stored spec: ${JSON.stringify(run.spec)}`);

  // Each rank (two agents on cluster web) printed what its agent launched it with.
  let lines = [];
  for (let i = 0; i < 300 && new Set(lines.map((l) => l.rank)).size < 2; i++) {
    lines = (await podium.call('GET', `/api/v1/runs/${id}/logs?q=${encodeURIComponent('form probe:')}`)).items;
    if (new Set(lines.map((l) => l.rank)).size < 2) await page.waitForTimeout(200);
  }
  const byRank = Object.fromEntries(lines.map((l) => [l.rank, l.line]));
  for (const rank of [0, 1]) {
    assert(byRank[rank] === `form probe: ${probe} | second: 2 | rank ${rank} | config file base.yml`, `rank ${rank} printed ${JSON.stringify(byRank[rank])} (all: ${JSON.stringify(lines)})`);
  }
  // The run page's log shows the same line.
  await page.waitForFunction((p) => document.querySelector('[data-test=log-view]')?.textContent?.includes(`form probe: ${p}`), probe, { timeout: 30000 });
  await page.waitForSelector('.page-head .badge.state-succeeded, .page-head .badge.state-failed', { timeout: 60000 });
  await shot('run-env-entrypoint');
  await cancelRun(podium, id);
});

test('an elastic run shows every slice count from min_slices up in the plan panel', async ({ page, podium, shot }) => {
  await page.goto(`${podium.base}/runs/new`);
  await page.waitForSelector('[data-test=plan-panel]');
  await page.click('summary:has-text("Paste a run YAML")');
  const yaml = [
    'name: web-elastic', 'cluster: web', 'workload: reference', 'model: reference-tiny', 'steps: 10',
    'per_device_batch_size: 4', 'max_target_length: 128', 'num_slices: 4', 'min_slices: 2',
    'parallelism:', '  dcn_fsdp: 2', '',
  ].join('\n');
  await page.fill('textarea[name=yaml]', yaml);
  await page.click('button:has-text("Load into the form")');
  const rows = page.locator('[data-test=plan-panel] tr[data-elastic-slices]');
  await rows.nth(2).waitFor({ timeout: 30000 });
  assert(await rows.count() === 3, `elastic rows: ${await rows.count()}`);
  const two = page.locator('[data-test=plan-panel] tr[data-elastic-slices="2"]');
  assert(await two.getAttribute('data-verdict') === 'ok', 'the 2-slice shape plans');
  assert((await two.textContent()).includes('dcn_data 2 -> 1'), `the 2-slice layout: ${await two.textContent()}`);
  const three = await page.locator('[data-test=plan-panel] tr[data-elastic-slices="3"]').textContent();
  assert(three.includes('dcn_fsdp 2 -> 1'), `the 3-slice layout: ${three}`);
  await shot('new-run-elastic-shapes');
});
