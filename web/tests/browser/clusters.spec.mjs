// Clusters through the dashboard: the list and detail pages, the new-cluster form, settings and
// launch policy edits, delete, and what a member sees. Each test makes its own clusters.
import { test, assert, refusal, trackPatches, referenceRun } from './fixtures.mjs';

// A v5p cluster like the one the new-cluster form test creates, for the tests that edit one.
const v5p = (podium, name) => podium.call('POST', '/api/v1/clusters', {
  name, accelerator: 'v5p-2x2x2', num_slices: 2, capacity: 'spot', zone: 'us-east5-a', price_per_chip_hour: 4.2, labels: { team: 'llm', pool: 'v5p' },
});

test('clusters, datasets and tokens pages', async ({ page, podium, asAdmin, shot }) => {
  await asAdmin();
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

test('an admin creates a cluster through the form and lands on its page', async ({ page, podium, asAdmin, shot }) => {
  await asAdmin();
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

test('a value the server refuses shows its error beside the form and creates nothing', async ({ page, podium, asAdmin, shot }) => {
  await asAdmin();
  const before = (await podium.call('GET', '/api/v1/clusters')).items.length;
  await page.goto(`${podium.base}/clusters`);
  await page.click('button:has-text("New cluster")');
  const form = '[data-test=cluster-form]';
  for (const bad of [{ accelerator: 'tpu9-7', num_slices: '1' }, { accelerator: 'cpu-2', num_slices: '0' }]) {
    await page.fill(`${form} input[name=name]`, 'web-bad');
    await page.fill(`${form} input[name=accelerator]`, bad.accelerator);
    await page.fill(`${form} input[name=num_slices]`, bad.num_slices);
    await page.click(`${form} button[type=submit]`);
    const server = await refusal(podium, 'POST', '/api/v1/clusters', { name: 'web-bad', accelerator: bad.accelerator, num_slices: Number(bad.num_slices), capacity: 'on-demand', labels: {} });
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

test('an admin changes the price and a label; only they are sent and they persist', async ({ page, podium, asAdmin, shot }) => {
  await asAdmin();
  await v5p(podium, 'web-v5p-settings');
  const { patches, lastPatch } = trackPatches(page);
  await page.goto(`${podium.base}/clusters/web-v5p-settings`);
  const settings = '[data-test=cluster-settings]';
  await page.waitForSelector(`${settings} input[name=price_per_chip_hour]`);
  await page.fill(`${settings} input[name=price_per_chip_hour]`, '5.75');
  await page.fill(`${settings} textarea[name=labels]`, 'team=research\npool=v5p');
  const n = patches.length;
  await page.click(`${settings} button:has-text("Save settings")`);
  await page.waitForSelector(`${settings} [role=status]:has-text("Saved")`);
  const sent = await lastPatch(n + 1);
  assert(JSON.stringify(Object.keys(sent).sort()) === '["labels","price_per_chip_hour"]', `PATCH carried only the changes: ${JSON.stringify(sent)}`);
  const c = await podium.call('GET', '/api/v1/clusters/web-v5p-settings');
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
  assert((await podium.call('GET', '/api/v1/clusters/web-v5p-settings')).price_per_chip_hour === null, 'the price is cleared');
  // A slice count the server refuses: its error is shown, nothing changes.
  await page.fill(`${settings} input[name=num_slices]`, '0');
  await page.click(`${settings} button:has-text("Save settings")`);
  const server = await refusal(podium, 'PATCH', '/api/v1/clusters/web-v5p-settings', { num_slices: 0 });
  await page.waitForFunction(({ sel, detail }) => document.querySelector(sel)?.textContent?.includes(detail), { sel: `${settings} .error-box`, detail: server.detail });
  assert((await podium.call('GET', '/api/v1/clusters/web-v5p-settings')).num_slices === 2, 'the slices are unchanged');
  await shot('cluster-settings');
});

test('an admin edits the launch policy and the page shows the policy in force', async ({ page, podium, asAdmin, shot }) => {
  await asAdmin();
  await v5p(podium, 'web-v5p-policy');
  const { patches, lastPatch } = trackPatches(page);
  await page.goto(`${podium.base}/clusters/web-v5p-policy`);
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
  const c = await podium.call('GET', '/api/v1/clusters/web-v5p-policy');
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

test('delete is refused while runs refer to a cluster and done otherwise', async ({ page, podium, asAdmin }) => {
  await asAdmin();
  // A run that refers to cluster web (cancelled at once: it need not run), and a cluster without runs.
  const run = await referenceRun(podium, { name: 'web-keeps-cluster', steps: 50, priority: 'low' });
  await podium.call('POST', `/api/v1/runs/${run.id}/cancel`, {});
  await v5p(podium, 'web-v5p-delete');
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
    await page.goto(`${podium.base}/clusters/web-v5p-delete`);
    await page.click('[data-test=delete-cluster]');
    await page.waitForURL(/\/clusters$/);
    const res = await fetch(`${podium.base}/api/v1/clusters/web-v5p-delete`, { headers: { Authorization: `Bearer ${podium.token}` } });
    assert(res.status === 404, `deleted: ${res.status}`);
  } finally {
    page.off('dialog', onDialog);
  }
});

test('a member sees clusters read-only: no new-cluster form, settings or policy editors, no delete', async ({ page, podium, shot }) => {
  const member = await podium.call('POST', '/api/v1/users', { username: 'web-member', role: 'member' });
  await page.goto(`${podium.base}/login`);
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
