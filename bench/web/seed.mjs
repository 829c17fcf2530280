// The dashboard bench's data, written with SQL into the bench's own database (the API would take
// hours to ingest as much): a team's history of `runs` runs, one run of `steps` steps, and
// `compared` recent runs of `comparedSteps` steps each for the compare page.
//
// One MaxText log imported through the API gives a real run row, attempt and owner; every other
// run and attempt is a copy of those rows (to_jsonb/jsonb_populate_record, so columns added by
// later migrations are copied too) with its own id and a fresh seq.
import { execFileSync } from 'node:child_process';
import { maxtextLog } from '../../web/tests/browser/maxtext_logs.mjs';

export async function seed(podium, { runs, steps, compared, comparedSteps }) {
  const sql = (text) => execFileSync('psql', [podium.databaseUrl, '-q', '-v', 'ON_ERROR_STOP=1', '-c', text]);
  const t0 = Date.now();
  const big = await podium.call('POST', '/api/v1/runs/import', {
    name: 'bench-long', accelerator: 'v6e-8', num_slices: 1, model: 'llama3-8b',
    log: maxtextLog({ steps: 30, seconds: 2.0, tflopsPerStep: 400, tokensPerStep: 4096, usedGb: 20, capacityGb: 31.25 }),
  });
  const attempt = (await podium.call('GET', `/api/v1/runs/${big.id}/attempts`)).items[0];
  // A run row or attempt row of the seed run as jsonb, with `changes` applied and a fresh seq.
  // The seed row is read once (MATERIALIZED, not rescanned as the table grows), and the record
  // built once per row (LATERAL: `(f(x)).*` would call f once per column).
  const copy = (table, id, series, changes) =>
    `WITH t AS MATERIALIZED (SELECT * FROM ${table} WHERE id = '${id}')
     INSERT INTO ${table} SELECT c.* FROM t, ${series},
       LATERAL jsonb_populate_record(NULL::${table}, to_jsonb(t) || jsonb_build_object('seq', nextval(pg_get_serial_sequence('${table}', 'seq'))) || ${changes}) c`;

  // The long run: `steps` steps of metrics, loss falling, step time with a slow wave and a spike
  // every 100,000 steps (the downsampled chart must still show it).
  sql(`DELETE FROM metrics WHERE run_id = '${big.id}'`);
  sql(`INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, tflops_per_device, tokens_per_second_per_device, total_weights, loss)
       SELECT '${big.id}', '${attempt.id}', ${attempt.number}, g,
              2.0 + 0.1 * sin(g / 500.0) + CASE WHEN g % 100000 = 99999 THEN 30 ELSE 0 END,
              200 + 10 * cos(g / 700.0), 2048, 4096, 10.0 / (1 + g / 10000.0)
       FROM generate_series(0, ${steps - 1}) g`);
  sql(`UPDATE runs SET last_step = ${steps - 1}, spec = jsonb_set(spec, '{steps}', '${steps}') WHERE id = '${big.id}';
       UPDATE attempts SET first_step = 0, last_step = ${steps - 1} WHERE id = '${attempt.id}'`);

  // The history: runs-1 copies, newest last (the runs page lists by seq, newest first). The last
  // `compared` copies are finished runs on 1 to 4 slices with their own attempt and metrics.
  const history = runs - 1 - compared;
  sql(copy('runs', big.id, `generate_series(1, ${history}) g`,
    `jsonb_build_object('id', 'run_bench_' || g, 'name', 'bench-' || g, 'last_step', 29,
       'state', (ARRAY['succeeded','failed','cancelled','succeeded'])[1 + g % 4], 'tags', ARRAY['bench'],
       'created_at', now() - make_interval(secs => ${runs} - g), 'finished_at', now() - make_interval(secs => ${runs} - g))`));
  sql(copy('runs', big.id, `generate_series(1, ${compared}) k`,
    `jsonb_build_object('id', 'run_cmp_' || k, 'name', 'compare-' || k, 'last_step', ${comparedSteps - 1},
       'state', 'succeeded', 'num_slices', 1 + (k - 1) % 4, 'tags', ARRAY['bench', 'compare'],
       'spec', jsonb_set(t.spec, '{steps}', '${comparedSteps}'),
       'created_at', now() - make_interval(secs => ${compared} - k), 'finished_at', now())`));
  sql(copy('attempts', attempt.id, `generate_series(1, ${compared}) k`,
    `jsonb_build_object('id', 'att_cmp_' || k, 'run_id', 'run_cmp_' || k, 'num_slices', 1 + (k - 1) % 4,
       'first_step', 0, 'last_step', ${comparedSteps - 1})`));
  // Each compared run's steps: step time shorter the more slices it has, a loss curve of its own.
  sql(`INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, tflops_per_device, tokens_per_second_per_device, total_weights, loss)
       SELECT 'run_cmp_' || k, 'att_cmp_' || k, ${attempt.number}, g,
              (CASE WHEN g = 0 THEN 40 ELSE 2.0 + 0.1 * sin(g / 50.0) END) / (1 + (k - 1) % 4),
              200 + 10 * cos(g / 70.0) - k, 2048 - 10 * k, 4096, (10.0 + k / 10.0) / (1 + g / 1000.0)
       FROM generate_series(1, ${compared}) k, generate_series(0, ${comparedSteps - 1}) g`);
  sql('ANALYZE');
  const comparedIds = Array.from({ length: compared }, (_, i) => `run_cmp_${i + 1}`);
  return { longRun: big.id, compared: comparedIds, seconds: (Date.now() - t0) / 1000 };
}
