// The runs page over a history longer than a page: pages of 50 by cursor, newest first, no run
// shown twice or skipped, Older and Newer buttons where they lead somewhere. The history (130
// runs under a tag of their own) is copied from one imported run with SQL, as bench/web/seed.mjs
// does at 100,000 runs.
import { execFileSync } from 'node:child_process';
import { test, assert } from './fixtures.mjs';
import { maxtextLog } from './maxtext_logs.mjs';

test.beforeEach(async ({ asAdmin }) => { await asAdmin(); });

test('the runs page pages a long history by cursor without repeating or skipping a run', async ({ page, podium }) => {
  const tag = `paging-${Date.now()}`;
  const seed = await podium.call('POST', '/api/v1/runs/import', {
    name: `${tag}-0`, accelerator: 'v6e-8', num_slices: 1, model: 'llama3-8b',
    log: maxtextLog({ steps: 5, seconds: 1.0, tflopsPerStep: 100, tokensPerStep: 1024, usedGb: 10, capacityGb: 31.25 }),
  });
  execFileSync('psql', [podium.databaseUrl, '-q', '-v', 'ON_ERROR_STOP=1', '-c',
    `UPDATE runs SET tags = ARRAY['${tag}'] WHERE id = '${seed.id}';
     WITH t AS MATERIALIZED (SELECT * FROM runs WHERE id = '${seed.id}')
     INSERT INTO runs SELECT c.* FROM t, generate_series(1, 129) g,
       LATERAL jsonb_populate_record(NULL::runs, to_jsonb(t) || jsonb_build_object('seq', nextval(pg_get_serial_sequence('runs', 'seq')),
         'id', '${seed.id}_' || g, 'name', '${tag}-' || g, 'tags', ARRAY['${tag}'])) c`]);
  const names = () => page.$$eval('[data-test=runs-table] tbody tr td:nth-child(2) a', (as) => as.map((a) => a.textContent));
  const expected = Array.from({ length: 130 }, (_, i) => `${tag}-${129 - i}`);

  await page.goto(`${podium.base}/runs?tag=${tag}`);
  await page.waitForFunction((first) => document.querySelector('[data-test=runs-table] tbody tr td:nth-child(2) a')?.textContent === first, expected[0]);
  const seen = [];
  for (const size of [50, 50, 30]) {
    const rows = await names();
    assert(rows.length === size, `a page of ${size} rows, got ${rows.length}`);
    seen.push(...rows);
    const older = page.locator('nav.pager button', { hasText: 'Older' });
    if (seen.length < 130) {
      await older.click();
      await page.waitForFunction((first) => document.querySelector('[data-test=runs-table] tbody tr td:nth-child(2) a')?.textContent === first, expected[seen.length]);
    } else {
      assert(await older.count() === 0, 'no Older button on the last page');
    }
  }
  assert(JSON.stringify(seen) === JSON.stringify(expected), `every run once, newest first: ${seen.slice(0, 3)}…`);
  await page.locator('nav.pager button', { hasText: 'Newer' }).click();
  await page.waitForFunction((first) => document.querySelector('[data-test=runs-table] tbody tr td:nth-child(2) a')?.textContent === first, expected[50]);
});
