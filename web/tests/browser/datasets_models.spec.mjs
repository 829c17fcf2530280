// Datasets and models through the dashboard: registering a dataset, the server's refusals shown
// by their field, delete; adding a model from its MaxText config.
import { resolve } from 'node:path';
import { test, assert, refusal, statusWithToken, fieldMessage, waitForText } from './fixtures.mjs';

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

test('an admin registers a dataset through the form and it shows in the table', async ({ page, podium, shot }) => {
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

test('a dataset the server refuses shows its error by the field and creates nothing; delete removes one', async ({ page, podium, shot }) => {
  // A registered dataset to delete, as the register test leaves one.
  await podium.call('POST', '/api/v1/datasets', { name: 'web-c4-old', uri: 'gs://web-bucket/c4/en/', format: 'arrayrecord', records: 1000, tokens: 2000000 });
  const before = (await podium.call('GET', '/api/v1/datasets')).items.map((d) => d.name).sort();
  await page.goto(`${podium.base}/datasets`);
  await page.click('button:has-text("Register dataset")');
  const form = '[data-test=dataset-form]';
  for (const uri of ['', '/nonexistent/podium-web.jsonl']) {
    await page.fill(`${form} input[name=name]`, 'web-bad');
    await page.fill(`${form} input[name=uri]`, uri);
    await page.click(`${form} button[type=submit]`);
    const server = await refusal(podium, 'POST', '/api/v1/datasets', { name: 'web-bad', uri, format: 'jsonl' });
    const field = (server.errors ?? []).find((e) => e.field === 'uri');
    assert(field, `the server names the uri: ${JSON.stringify(server)}`);
    await waitForText(page, fieldMessage(form, 'uri'), field.message);
    await waitForText(page, `${form} .error-box`, String(server.status));
    if (uri === '') await shot('dataset-refused');
  }
  const after = (await podium.call('GET', '/api/v1/datasets')).items.map((d) => d.name).sort();
  assert(JSON.stringify(after) === JSON.stringify(before), `nothing was created: ${after}`);
  await page.click(`${form} button:has-text("Cancel")`);
  await page.click('tr[data-dataset=web-c4-old] [data-test=delete-dataset]');
  await page.waitForSelector('tr[data-dataset=web-c4-old]', { state: 'detached' });
  assert(await statusWithToken(podium, podium.token, '/api/v1/datasets/web-c4-old') === 404, 'deleted on the server');
});

test('an admin adds a model by uploading its MaxText config; the planner counts it; a bad config is refused by field', async ({ page, podium, shot }) => {
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
  const server = await refusal(podium, 'POST', '/api/v1/models', { name: 'web-bad-model', yaml: 'base_emb_dim: 512\nvocab_size: 100\n' });
  const field = (server.errors ?? []).find((e) => e.field === 'yaml');
  assert(server.status === 422 && field, `the server names yaml: ${JSON.stringify(server)}`);
  await waitForText(page, `${form} label:has([name=config]) small.bad`, field.message);
  assert(await statusWithToken(podium, podium.token, '/api/v1/models/web-bad-model') === 404, 'nothing stored');
  await page.click(`${form} button:has-text("Cancel")`);
  assert(await page.locator('tr[data-model=llama2-7b] [data-test=delete-model]').count() === 0, 'built-ins offer no delete');
  await page.click('tr[data-model=web-almodel] [data-test=delete-model]');
  await page.waitForSelector('tr[data-model=web-almodel]', { state: 'detached' });
  assert(await statusWithToken(podium, podium.token, '/api/v1/models/web-almodel') === 404, 'deleted on the server');
});
