// /runs/{id}: state and attempts timeline, live charts, live log, checkpoints, summary, cancel,
// delete (a finished run, by its owner or an admin).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { navigate } from '../router';
import { useMe } from '../session';
import { Chart } from '../components/Chart';
import { LogView } from '../components/LogView';
import { FailureNotice } from '../components/FailureNotice';
import { PlanCheckBadge } from '../components/PlanCheckBadge';
import { RunCuration } from '../components/RunCuration';
import { StallBadge } from '../components/StallBadge';
import { expectationBasisText, planCheckOf } from '../planCheck';
import { Empty, ErrorBox, Loading, StateBadge, usePoll } from '../components/ui';
import { count, gib, money, num, pct, progress, ratioText, seconds } from '../format';
import { FINISHED_STATES, type AttemptEnvironment, type Metrics, type Summary } from '../types';
import { environmentEntries } from '../environment';

const CHARTS: { key: string; title: string; color: string; band?: boolean }[] = [
  { key: 'loss', title: 'Loss', color: '#2f5fd0' },
  { key: 'step_seconds', title: 'Step time (s)', color: '#d1495b', band: true },
  { key: 'tokens_per_second_per_device', title: 'Tokens/s/device', color: '#3f9d6b' },
  { key: 'tflops_per_device', title: 'TFLOP/s/device', color: '#b7791f' },
  { key: 'mfu', title: 'MFU', color: '#7a5cc4' },
];

export function RunPage({ id }: { id: string }) {
  const [state, setState] = useState<string | null>(null);
  const runQ = usePoll(() => api.run(id), [id, state], 3000, true);
  const run = runQ.data;
  const live = !!run && !FINISHED_STATES.includes(run.state);
  const summaryQ = usePoll(() => api.summary(id), [id], 5000, live);
  const attemptsQ = usePoll(() => api.attempts(id), [id], 4000, live);
  const eventsQ = usePoll(() => api.events(id), [id], 4000, live);
  const checkpointsQ = usePoll(() => api.checkpoints(id), [id], 5000, live);
  const [cancelError, setCancelError] = useState<unknown>(null);
  const me = useMe();
  // Asked for with the run, not after it: the charts are what a long run's page waits on.
  const metricsQ = useRunMetrics(id, live);

  if (runQ.error && !run) return <main><ErrorBox error={runQ.error} /></main>;
  if (!run) return <main><Loading /></main>;
  const ranks = Array.from({ length: attemptsQ.data?.items[0]?.world_size ?? 0 }, (_, i) => i);
  const cancel = async () => {
    if (!confirm(`Cancel run ${run.name}?`)) return;
    try { await api.cancelRun(run.id); setCancelError(null); runQ.reload(); } catch (e) { setCancelError(e); }
  };
  // The server's rule (DELETE /runs/{id}): finished runs, by their owner or an admin.
  const mayDelete = !live && !!me && (me.role === 'admin' || (me.role === 'member' && me.username === run.owner));
  const remove = async () => {
    if (!confirm(`Delete run ${run.name}? Its metrics, logs, events and checkpoint records leave Podium for good; checkpoint files in storage are not touched.`)) return;
    try { await api.deleteRun(run.id); navigate('/runs'); } catch (e) { setCancelError(e); }
  };

  return (
    <main class="run-page">
      <header class="page-head">
        <div>
          <h1>{run.name}</h1>
          <p class="muted">{run.id} · {run.model} · {run.workload} · {run.cluster ?? `${run.accelerator} (imported)`}{run.num_slices ? ` × ${run.current_slices ?? run.num_slices}/${run.num_slices} slices` : ''} · owner {run.owner ?? '–'}</p>
        </div>
        <div class="actions">
          <StateBadge state={run.state} failure={run.failure_class} />
          <PlanCheckBadge check={planCheckOf(summaryQ.data, run)} />
          <StallBadge run={run} />
          <a class="button" href={`/compare?runs=${run.id}`}>Compare…</a>
          {live && run.state !== 'cancelling' && <button type="button" class="danger" onClick={cancel}>Cancel run</button>}
          {mayDelete && <button type="button" class="danger" data-test="delete-run" onClick={remove}>Delete run</button>}
        </div>
      </header>
      <ErrorBox error={cancelError} />
      <RunCuration run={run} onSaved={(r) => runQ.setData({ ...run, ...r })} />
      <FailureNotice run={run} />
      {run.waiting_reason && !['running', ...FINISHED_STATES].includes(run.state) && <p class="notice">Waiting: {run.waiting_reason}</p>}
      {run.skipped_checks.length > 0 && <p class="notice" data-test="skipped-checks">Submitted skipping the plan's {run.skipped_checks.join(', ')} check{run.skipped_checks.length === 1 ? '' : 's'}{run.forced ? ' despite errors in them' : ''}.</p>}
      <section class="cards">
        <div class="card"><span class="label">Progress</span><strong>{progress(run.last_step, run.spec?.steps)}</strong></div>
        <div class="card"><span class="label">Restarts / recoveries</span><strong>{run.restarts} / {run.recoveries}</strong>{run.resumed_from_step !== null && <span class="muted small">resumed from {run.resumed_from_step}</span>}</div>
        <SummaryCards summary={summaryQ.data} />
      </section>
      <RunCharts metrics={metricsQ.metrics} error={metricsQ.error} summary={summaryQ.data} peak={(run.plan && "topology" in run.plan ? run.plan.topology?.peak_tflops_per_device : 0) ?? 0} />
      <section>
        <h2>Timeline</h2>
        {attemptsQ.data && attemptsQ.data.items.length === 0 && <Empty>No attempt yet{run.waiting_reason ? `: ${run.waiting_reason}` : ''}.</Empty>}
        <ol class="timeline">
          {(eventsQ.data?.items ?? []).map((e, i) => (
            <li key={`e${i}`} class={`event kind-${e.kind}`}><time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time> {e.kind === 'state'
              ? <>{e.from_state ?? '·'} → <strong>{e.to_state}</strong></>
              : <strong class="warn">{e.kind}</strong>} <span class="muted">{e.cause}</span></li>
          ))}
        </ol>
        {(attemptsQ.data?.items ?? []).map((a) => (
          <details key={a.id} class="attempt" open={a.state !== 'succeeded' && a.state !== 'failed'}>
            <summary>Attempt {a.number} · {a.reason} · {a.state}{a.failure_class ? ` · ${a.failure_class}` : ''} · {a.world_size} ranks on slices {a.slices.join(', ')}
              {a.resumed_from_step !== null ? ` · resumed from step ${a.resumed_from_step}` : ''}{a.first_step !== null ? ` · steps ${a.first_step}–${a.last_step ?? '?'}` : ''}
              {a.ending_cause ? ` · ${a.ending_cause}` : ''}
              {a.engine ? ` · ${a.executor} job ${a.engine.job_id ?? '(submitting)'}${a.engine.state ? ` ${a.engine.state}` : ''}` : ''}</summary>
            <AttemptEnvironmentLine env={a.environment} />
            <table class="data compact">
              <thead><tr><th>Rank</th><th>Slice</th><th>Host</th><th>Worker</th><th>State</th><th>Exit</th><th>Started</th><th>Ended</th></tr></thead>
              <tbody>{a.hosts.map((h) => (
                <tr key={h.rank}><td>{h.rank}</td><td>{h.slice}</td><td>{h.host}</td><td>{h.hostname ?? h.worker_id ?? '–'}</td><td>{h.state}</td>
                  <td>{h.exit_code ?? (h.signal ? `signal ${h.signal}` : '–')}</td><td>{h.started_at ? new Date(h.started_at).toLocaleTimeString() : '–'}</td><td>{h.ended_at ? new Date(h.ended_at).toLocaleTimeString() : '–'}</td></tr>
              ))}</tbody>
            </table>
          </details>
        ))}
      </section>
      <section>
        <h2>Log</h2>
        <LogView runId={id} ranks={ranks} onState={setState} />
      </section>
      <section>
        <h2>Checkpoints</h2>
        {(checkpointsQ.data?.items ?? []).length === 0 ? <Empty>No checkpoint yet.</Empty> : (
          <table class="data compact">
            <thead><tr><th class="num">Step</th><th>URI</th><th class="num">Bytes</th><th>Saved</th></tr></thead>
            <tbody>{checkpointsQ.data!.items.map((c) => <tr key={c.id ?? c.step}><td class="num">{c.step}</td><td><code>{c.uri}</code></td><td class="num">{count(c.bytes)}</td><td>{new Date(c.created_at).toLocaleString()}</td></tr>)}</tbody>
          </table>
        )}
      </section>
    </main>
  );
}

function SummaryCards({ summary }: { summary: Summary | null }) {
  if (!summary) return null;
  const badput = Object.entries(summary.badput ?? {}).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  return (
    <>
      <div class="card"><span class="label">Steady step time</span><strong>{seconds(summary.step_seconds)}</strong></div>
      <div class="card"><span class="label">TFLOP/s/device</span><strong>{num(summary.tflops_per_device)}</strong></div>
      <div class="card"><span class="label">Tokens/s/device</span><strong>{num(summary.tokens_per_second_per_device)}</strong></div>
      <div class="card"><span class="label">MFU</span><strong>{pct(summary.mfu)}</strong></div>
      {summary.plan_check && (
        <div class="card" data-test="plan-check" title={expectationBasisText(summary.plan_check)}>
          <span class="label">Against the plan</span>
          <strong class={`plan-check ${summary.plan_check.verdict}`}>{ratioText(summary.plan_check.ratio)}</strong>
          <span class="muted small">{num(summary.plan_check.expected_tflops_per_device)} TFLOP/s/device expected{summary.plan_check.decided_at ? '' : ' (not decided yet)'}</span>
        </div>
      )}
      <div class="card"><span class="label">HBM used</span><strong>{gib(summary.hbm_gib_used)}</strong></div>
      <div class="card"><span class="label">Cost / 1B tokens</span><strong>{money(summary.cost_per_billion_tokens)}</strong></div>
      <div class="card wide"><span class="label">Goodput</span><strong>{pct(summary.goodput)}</strong>
        {badput.length > 0 && <span class="muted small">badput: {badput.map(([k, v]) => `${k.replace(/_/g, ' ')} ${seconds(v)}`).join(' · ')}</span>}
      </div>
    </>
  );
}

/** The run's downsampled series (at most 1,000 points whatever its length); while live, new steps
 * are fetched and appended (and the whole downsampled again past 4,000 points). */
function useRunMetrics(id: string, live: boolean) {
  const [metrics, setMetrics] = useState<Metrics | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let current: Metrics | null = null;
    const fields = 'loss,step_seconds,tokens_per_second_per_device,tflops_per_device';
    const load = async () => {
      try {
        if (!current || current.steps.length === 0) {
          current = await api.metrics(id, { fields, max_points: 1000 });
        } else {
          // Extend live: only the steps after the last one shown.
          const last = current.steps[current.steps.length - 1];
          const more = await api.metrics(id, { fields, from_step: last + 1, max_points: 1000 });
          if (more.steps.length) {
            const merged: Metrics = { steps: current.steps.concat(more.steps), series: {} };
            for (const k of Object.keys(current.series)) merged.series[k] = current.series[k].concat(more.series[k] ?? more.steps.map(() => null));
            current = merged.steps.length > 4000 ? await api.metrics(id, { fields, max_points: 1000 }) : merged;
          }
        }
        if (!stopped) { setMetrics(current); setError(null); }
      } catch (e) {
        if (!stopped) setError(e);
      }
      if (!stopped && live) timer = setTimeout(load, 2000);
    };
    load();
    return () => { stopped = true; if (timer) clearTimeout(timer); };
  }, [id, live]);
  return { metrics, error };
}

/** Charts fed by the downsampled series. */
function RunCharts({ metrics, error, summary, peak }: { metrics: Metrics | null; error: unknown; summary: Summary | null; peak: number }) {
  const markers = useMemo(() => (summary?.steady_state?.excluded ?? [])
    .filter((e) => e.reason === 'compile' || e.reason === 'warm_up')
    .map((e) => ({ x: e.step, label: e.reason === 'compile' ? 'compile' : 'warm-up' })), [summary]);
  // MFU per step: the logged TFLOP/s/device over the accelerator's per-device peak.
  const series = useMemo(() => CHARTS.map((c) => ({
    ...c,
    values: c.key === 'mfu'
      ? (peak > 0 ? (metrics?.series.tflops_per_device ?? []).map((v) => (v === null ? null : v / peak)) : [])
      : metrics?.series[c.key] ?? [],
  })), [metrics, peak]);

  return (
    <section class="charts" data-test="run-chart" data-points={metrics?.steps.length ?? 0}>
      <h2>Metrics</h2>
      <ErrorBox error={error} />
      {metrics && metrics.steps.length === 0 && <Empty>No step metrics yet.</Empty>}
      {metrics && metrics.steps.length > 0 && (
        <div class="chart-grid">
          {series.filter((s) => s.values.some((v) => v !== null)).map((s) => (
            <Chart key={s.key} title={s.title} x={metrics.steps} xLabel="step"
              series={[{ label: s.title, values: s.values, color: s.color }]}
              band={s.band ? (summary?.steady_state.band as [number, number] | null | undefined) ?? null : null} markers={markers} />
          ))}
        </div>
      )}
    </section>
  );
}

/** What the attempt ran with: the versions its ranks reported, the code, the image. */
function AttemptEnvironmentLine({ env }: { env: AttemptEnvironment }) {
  const entries = environmentEntries(env);
  if (entries.length === 0) return <p class="muted" data-test="attempt-environment">Environment: not reported.</p>;
  return (
    <p class="muted" data-test="attempt-environment">
      Environment: {entries.map((e, i) => <span key={e.key}>{i > 0 ? ' · ' : ''}{e.label} <code>{e.value}</code></span>)}
      {env.differs.length > 0 ? <strong> · differs across ranks: {env.differs.join(', ')}</strong> : null}
    </p>
  );
}
