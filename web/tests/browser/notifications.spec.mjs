// /settings/notifications: a user subscribes a webhook (a receiver this test runs on 127.0.0.1,
// which the suite's server allows), sees the secret once, sees a refused target's field error,
// watches a run's events arrive in the delivery log, and deletes the webhook.
import { createServer } from 'node:http';
import { createHmac } from 'node:crypto';
import { test, assert } from './fixtures.mjs';

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

/** A webhook receiver: keeps every POST (headers, raw body) and answers 200. */
async function startReceiver() {
  const got = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => { got.push({ headers: req.headers, body }); res.writeHead(200).end('ok'); });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, got, close: () => new Promise((r) => server.close(r)) };
}

function signed(secret, r) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(r.headers['podium-signature'] ?? '');
  return !!m && createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest('hex') === m[2];
}

test('subscribe a webhook, see its deliveries, delete it', async ({ page, podium, shot }) => {
  const rx = await startReceiver();
  try {
    await page.goto(`${podium.base}/settings/notifications`);
    await page.waitForSelector('text=No webhooks.');
    assert(await page.getAttribute('nav a[href="/settings/notifications"]', 'aria-current') === 'page', 'the nav names the page');

    // A target at the metadata server is refused, with the reason beside the field name.
    await page.fill('[data-test=webhook-form] input[type=url]', 'https://169.254.169.254/latest/meta-data/');
    await page.click('[data-test=webhook-form] button[type=submit]');
    await page.waitForSelector('.error-box:has-text("422")');
    assert((await page.textContent('.error-box')).includes('cloud metadata server'), await page.textContent('.error-box'));

    await page.fill('[data-test=webhook-form] input[type=url]', rx.url);
    await page.check('[data-test=webhook-form] input[value="run.started"]');
    await page.click('[data-test=webhook-form] button[type=submit]');
    await page.waitForSelector('[data-test=webhook-secret]');
    const secret = (await page.textContent('[data-test=webhook-secret] code.secret')).trim();
    assert(/^whsec_/.test(secret), `the secret is shown: ${secret}`);
    await page.waitForSelector(`[data-test=webhooks-table] td:has-text("${rx.url}")`);
    const row = page.locator('[data-test=webhooks-table] tr[data-webhook]');
    assert(await row.count() === 1, 'one webhook listed');
    assert((await row.textContent()).includes('run.succeeded'), await row.textContent());

    // A run's events reach the receiver, signed, and the log shows them.
    const run = await podium.call('POST', '/api/v1/runs', { name: 'web-hooked', cluster: 'web', workload: 'command', command: ['true'] });
    for (let i = 0; i < 300 && !rx.got.some((r) => JSON.parse(r.body).type === 'run.succeeded'); i++) await page.waitForTimeout(100);
    const types = rx.got.map((r) => JSON.parse(r.body).type);
    assert(types.includes('run.succeeded'), `the receiver got run.succeeded: ${types}`);
    assert(rx.got.every((r) => signed(secret, r)), 'every delivery is signed with the secret shown');
    assert(rx.got.every((r) => JSON.parse(r.body).run.id === run.id), 'the events are the run\'s');

    await row.locator('button:has-text("Delivery log")').click();
    await page.waitForSelector('[data-test=webhook-deliveries] td:has-text("run.succeeded")');
    const log = await page.textContent('[data-test=webhook-deliveries]');
    assert(log.includes(run.id) && log.includes('HTTP 200') && log.includes('delivered'), log);
    await shot('notifications');

    // Reloaded, the page lists the webhook but never the secret again.
    await page.reload();
    await page.waitForSelector(`[data-test=webhooks-table] td:has-text("${rx.url}")`);
    assert(!(await page.content()).includes(secret), 'the secret is shown once');

    await page.click('[data-test=webhooks-table] button:has-text("Delete")');
    await page.waitForSelector('text=No webhooks.');
    const listed = await podium.call('GET', '/api/v1/webhooks');
    assert(listed.items.length === 0, `deleted on the server: ${JSON.stringify(listed.items)}`);
  } finally {
    await rx.close();
  }
});
