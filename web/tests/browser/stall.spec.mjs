// Issue 30 point 1 on the dashboard: a run whose rank 0 printed a few steps and then nothing
// while its processes live on (on_stall alert, stall_seconds 2: recorded, not stopped) shows
// the stalled badge on its page and in the runs list, and the stall on its timeline. The run is
// cancelled at the end so that the next test finds cluster web free.
import { test, assert, cancelRun } from './fixtures.mjs';

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

test('a stalled run shows its badge on its page, in the runs list and on its timeline', async ({ page, podium, shot }) => {
  const steps = Array.from({ length: 5 }, (_, s) =>
    `echo 'completed step: ${s}, seconds: 0.100, TFLOP/s/device: 1.0, Tokens/s/device: 1024.0, total_weights: 2048, loss: 2.5'`).join('; ');
  const run = await podium.call('POST', '/api/v1/runs', {
    name: 'web-stalled', cluster: 'web', workload: 'command', command: ['sh', '-c', `${steps}; sleep 300`],
    on_stall: 'alert', stall_seconds: 2,
  });
  try {
    await page.goto(`${podium.base}/runs/${run.id}`);
    const badge = page.locator('[data-test=stall-badge]');
    await badge.waitFor({ timeout: 90000 });
    const text = (await badge.textContent()).trim();
    assert(/^stalled · no step for [\d.]+ s after step 4$/.test(text), `badge text: ${text}`);
    assert(await badge.getAttribute('data-last-step') === '4', 'the last step');
    assert(await badge.getAttribute('data-on-stall') === 'alert', 'the policy');
    assert(Number(await badge.getAttribute('data-bound')) === 2, 'the bound is the run\'s floor');
    const title = await badge.getAttribute('title');
    assert(title.includes('only recorded (on_stall alert)'), `tooltip: ${title}`);
    // The timeline's entry (its events poll every 4 s).
    const entry = page.locator('.timeline .event.kind-stalled');
    await entry.waitFor({ timeout: 15000 });
    assert((await entry.textContent()).includes('stalled: no step for'), 'the timeline says why');
    await shot('run-stalled');
    await page.goto(`${podium.base}/runs`);
    const row = page.locator('[data-test=runs-table] tr', { hasText: 'web-stalled' });
    const listed = row.locator('[data-test=stall-badge]');
    await listed.waitFor();
    assert((await listed.textContent()).trim() === 'stalled', 'the list shows the compact badge');
    await shot('runs-stalled');
  } finally {
    await cancelRun(podium, run.id);
  }
});
