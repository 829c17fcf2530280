// The browser suite (`npm run test:browser`): Debian's Chromium driven by @playwright/test
// against a real podium-server with real podium-worker agents (tests/browser/fixtures.mjs).
// Needs PODIUM_BIN_DIR and PODIUM_TEST_DATABASE_URL (scripts/test.sh sets both) and a built
// dashboard (npm run build). No browser is downloaded: PODIUM_CHROMIUM or /usr/bin/chromium.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'tests/browser',
  testMatch: '*.spec.mjs',
  // One worker: each worker starts its own server and two agents, and the runs of the tests
  // share cluster web's one slice; a second worker on two cores does not finish sooner.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 120000,
  reporter: 'list',
  outputDir: 'test-results/playwright',
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.PODIUM_CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    },
  },
});
