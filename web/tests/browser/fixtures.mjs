// The browser suite's fixtures: one real Podium per Playwright worker (podium.mjs), a fresh
// browser context per test (Playwright's own page fixture), and on every page the checks the
// whole suite holds to: no request leaves the server, the console stays clean, dialogs are
// accepted. Each test creates what else it needs through the API, so that any one of them runs
// alone (`npx playwright test -g '<name>'`).
import { test as base } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startPodium } from './podium.mjs';

// Screenshots of every page, for people to look at (not committed; not compared).
const screens = resolve(new URL('../../test-results', import.meta.url).pathname);

export function assert(cond, message) { if (!cond) throw new Error(message); }
export function near(a, b, rel = 1e-3) { return Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b)); }

export const test = base.extend({
  // The server, its two agents on cluster `web` (cpu-2) and the dataset `web-text`: started once
  // per worker because starting them takes seconds. A test relies on nothing another one made
  // (runs.spec.mjs lets two tests look at one run, and says why).
  podium: [async ({}, use) => {
    const podium = await startPodium();
    try {
      await use(podium);
    } finally {
      await podium.stop();
    }
  }, { scope: 'worker', timeout: 120000 }],

  page: async ({ page, podium }, use) => {
    const consoleErrors = [];
    const external = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    page.on('dialog', (d) => d.accept());
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith(podium.base) && !url.startsWith('data:') && !url.startsWith('blob:')) external.push(url);
    });
    await use(page);
    // No request left the server and the console stayed clean (401s are the sign-in page's
    // own probes and the refusals some tests provoke on purpose).
    assert(external.length === 0, `external requests: ${external.join(', ')}`);
    const relevant = consoleErrors.filter((e) => !/401|Failed to load resource/.test(e));
    assert(relevant.length === 0, `console errors: ${relevant.join(' | ')}`);
  },

  shot: async ({ page }, use) => {
    mkdirSync(screens, { recursive: true });
    await use((name) => page.screenshot({ path: join(screens, `${name}.png`), fullPage: true }));
  },

  // A session for the admin, made the way the sign-in page makes one (POST /auth/login with
  // the token) but without loading the page: for tests whose point lies elsewhere.
  asAdmin: async ({ page, podium }, use) => {
    await use(async () => {
      const res = await page.request.post(`${podium.base}/api/v1/auth/login`, { data: { token: podium.token } });
      assert(res.ok(), `the admin session: ${res.status()} ${await res.text()}`);
    });
  },

  // The dashboard as a user: signIn(token) through the sign-in page, signOut() through the
  // header's button.
  signIn: async ({ page, podium }, use) => {
    await use(async (token) => {
      await page.goto(`${podium.base}/login`);
      await page.fill('[data-test=login-token]', token);
      await page.click('[data-test=login-submit]');
      await page.waitForURL(/\/runs$/);
    });
  },
  signOut: async ({ page }, use) => {
    await use(async () => {
      await page.click('button:has-text("Sign out")');
      await page.waitForSelector('[data-test=login-token]');
    });
  },
});

// What the server answers a token, or a username and password, now.
export const statusWithToken = async (podium, token, path = '/api/v1/auth/me', init = {}) =>
  (await fetch(podium.base + path, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}) } })).status;
export const statusOfLogin = async (podium, username, password) =>
  (await fetch(`${podium.base}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password }) })).status;

// The server's own answer to a body, for comparing with what the page shows (never stored:
// every body sent this way is one the server refuses).
export const refusal = async (podium, method, path, body) => {
  const res = await fetch(podium.base + path, { method, headers: { Authorization: `Bearer ${podium.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  assert(!res.ok, `${method} ${path} ${JSON.stringify(body)} should be refused, got ${res.status}`);
  return { status: res.status, ...(await res.json()) };
};

export const fieldMessage = (form, name) => `${form} label:has([name=${name}]) small.bad`;
export const waitForText = (page, sel, text) => page.waitForFunction(({ sel, text }) => document.querySelector(sel)?.textContent?.includes(text), { sel, text });
export const until = async (page, what, check, ms = 10000) => {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(200);
  }
};

// A reference run on cluster `web` made through the API (70 KB of text feeds ~67 steps of
// 2 devices x 4 x 128 tokens).
export const referenceRun = (podium, fields) => podium.call('POST', '/api/v1/runs', {
  cluster: 'web', dataset: 'web-text', model: 'reference-tiny', workload: 'reference', per_device_batch_size: 4, max_target_length: 128, ...fields,
});
// Ends a run a test started, so that the next test finds the cluster free.
export const cancelRun = async (podium, id) => {
  const run = await podium.call('GET', `/api/v1/runs/${id}`);
  if (!['succeeded', 'failed', 'cancelled', 'cancelling'].includes(run.state)) await podium.call('POST', `/api/v1/runs/${id}/cancel`, {});
};
// The PATCH bodies the page sends to /api/v1/clusters/..., and the n-th of them once sent.
export const trackPatches = (page) => {
  const patches = [];
  page.on('request', (r) => { if (r.method() === 'PATCH' && r.url().includes('/api/v1/clusters/')) patches.push(JSON.parse(r.postData() || '{}')); });
  const lastPatch = async (n) => {
    for (let i = 0; i < 50 && patches.length < n; i++) await page.waitForTimeout(100);
    assert(patches.length === n, `expected ${n} PATCH requests, saw ${patches.length}`);
    return patches[n - 1];
  };
  return { patches, lastPatch };
};
