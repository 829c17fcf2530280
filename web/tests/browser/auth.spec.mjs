// Signing in and out, and deep links that survive a reload.
import { test, assert } from './fixtures.mjs';
import { maxtextLog } from './maxtext_logs.mjs';

test('an unsigned visit to a deep link lands on the sign-in page', async ({ page, podium, shot }) => {
  await page.goto(`${podium.base}/runs`);
  await page.waitForSelector('[data-test=login-token]');
  assert(page.url().includes('/login'), `expected /login, at ${page.url()}`);
  await shot('login');
});

test('a wrong token is refused with a clear message', async ({ page, podium }) => {
  await page.goto(`${podium.base}/login`);
  await page.fill('[data-test=login-token]', 'pdm_not-a-token');
  await page.click('[data-test=login-submit]');
  await page.waitForSelector('.error-box');
  assert((await page.textContent('.error-box')).includes('401'), 'expected a 401 message');
});

test('sign in with the admin token', async ({ page, podium }) => {
  await page.goto(`${podium.base}/login`);
  await page.fill('[data-test=login-token]', podium.token);
  await page.click('[data-test=login-submit]');
  await page.waitForURL(/\/runs$/);
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'podium_session');
  assert(session && session.httpOnly && session.sameSite === 'Strict', 'session cookie must be HttpOnly and SameSite=Strict');
});

test('sign out ends the session', async ({ page, podium, signIn }) => {
  await signIn(podium.token);
  await page.click('button:has-text("Sign out")');
  await page.waitForSelector('[data-test=login-token]');
  await page.goto(`${podium.base}/runs`);
  await page.waitForSelector('[data-test=login-token]');
});

test('deep links survive a reload', async ({ page, podium, asAdmin }) => {
  // A run page and a comparison to link to: two imported MaxText logs.
  const imported = [];
  for (const accelerator of ['v6e-8', 'tpu7x-8']) {
    const log = maxtextLog({ seconds: 1.0, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 20, capacityGb: 31.25 });
    imported.push((await podium.call('POST', '/api/v1/runs/import', { name: `web-link-${accelerator}`, accelerator, num_slices: 1, model: 'llama3-8b', config: {}, log })).id);
  }
  const runId = imported[0];
  await asAdmin();
  for (const path of [`/runs/${runId}`, `/compare?runs=${imported.join(',')}`, '/clusters/web', '/tokens']) {
    await page.goto(podium.base + path);
    await page.reload();
    await page.waitForSelector('main h1');
    assert(!page.url().includes('/login'), `${path} should stay signed in across a reload`);
    assert(new URL(page.url()).pathname === path.split('?')[0], `${path} kept its URL`);
  }
  const res = await page.request.get(`${podium.base}/runs/${runId}`);
  assert(res.status() === 200 && (res.headers()['content-security-policy'] || '').includes("default-src 'self'"), 'the shell carries the CSP');
});
