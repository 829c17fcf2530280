// The browser suite (`npm run test:browser`): Debian's Chromium driven by @playwright/test
// against a real podium-server with real podium-worker agents (tests/browser/fixtures.mjs).
// Needs PODIUM_BIN_DIR and PODIUM_TEST_DATABASE_URL (scripts/test.sh sets both) and a built
// dashboard (npm run build). No browser is downloaded: PODIUM_CHROMIUM or /usr/bin/chromium.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'tests/browser',
  testMatch: '*.spec.mjs',
  // Two workers, each with its own server, database and two agents (fixtures.mjs), each taking
  // whole files: most of the suite's time is a reference run's ranks starting, which the other
  // worker's files fill. On 2 busy cores: 163 s with two workers, 253 s with one.
  workers: 2,
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
