// The live plan beside the new-run form: topology, mesh, HBM, data, estimate, errors and the
// alternatives that fix them in one click.
import { count, gib, num, pct, seconds } from '../format';
import { memoryVerdict } from '../memoryVerdict';
import { ErrorBox } from './ui';
import type { Alternative, ElasticShape, Plan } from '../types';

const BREAKDOWN_COLORS = ['#2f5fd0', '#3f9d6b', '#b7791f', '#a23f8c', '#d1495b', '#5b8e7d', '#7a5cc4', '#c77d2e', '#6c757d'];

export function PlanPanel({ plan, error, planning, onApply }: { plan: Plan | null; error: unknown; planning: boolean; onApply: (a: Alternative) => void }) {
  return (
    <aside class="plan-panel" data-test="plan-panel" aria-label="Plan" aria-busy={planning}>
      <h2>Plan {planning && <span class="muted small">updating…</span>}
        {plan && <span class={`badge ${plan.ok ? 'state-succeeded' : 'state-failed'}`}>{plan.ok ? 'ok' : `${plan.errors.length} error${plan.errors.length === 1 ? '' : 's'}`}</span>}
      </h2>
      <ErrorBox error={error} />
      {!plan && !error && <p class="muted">The plan appears here as you fill in the form.</p>}
      {plan && (
        <>
          {plan.errors.length > 0 && (
            <ul class="issues errors">
              {plan.errors.map((e, i) => <li key={i} data-code={e.code}><strong>{e.code}</strong>{e.skipped && <span class="muted"> (skipped: {e.check ?? 'force'})</span>}: {e.message}{e.hint && <div class="hint">{e.hint}</div>}</li>)}
            </ul>
          )}
          {plan.alternatives.length > 0 && (
            <section>
              <h3>Alternatives</h3>
              <ul class="alternatives">
                {plan.alternatives.map((a, i) => (
                  <li key={i}>
                    <span class="muted small">{a.kind}</span> {a.description}
                    {a.per_device_gib !== undefined && <span class="muted"> ({gib(a.per_device_gib)})</span>}
                    {a.set && <button type="button" class="small" data-alternative={a.kind} onClick={() => onApply(a)}>Apply</button>}
                  </li>
                ))}
              </ul>
            </section>
          )}
          {plan.warnings.length > 0 && (
            <ul class="issues warnings">
              {plan.warnings.map((w, i) => <li key={i}><strong>{w.code}</strong>: {w.message}{w.hint && <div class="hint">{w.hint}</div>}</li>)}
            </ul>
          )}
          {plan.topology && (
            <section>
              <h3>Topology</h3>
              <dl class="facts">
                <dt>Accelerator</dt><dd>{plan.topology.type}{plan.topology.topology ? ` (${plan.topology.topology})` : ''} × {plan.topology.slices}</dd>
                <dt>Chips</dt><dd>{count(plan.topology.total_chips)}</dd>
                <dt>Devices</dt><dd>{count(plan.topology.total_devices)}</dd>
                <dt>Hosts</dt><dd>{count(plan.topology.total_hosts)}</dd>
              </dl>
            </section>
          )}
          {plan.mesh && plan.topology && <MeshView plan={plan} />}
          {plan.memory && <MemoryBar memory={plan.memory} />}
          {plan.data && (
            <section>
              <h3>Data</h3>
              <dl class="facts">
                <dt>Tokens per step</dt><dd>{count(plan.data.tokens_per_step)}</dd>
                <dt>Tokens available</dt><dd>{plan.data.tokens_available === null ? 'unknown' : count(plan.data.tokens_available)}</dd>
                <dt>Runs out at step</dt><dd class={plan.data.exhausted_at_step !== null ? 'bad' : ''}>{plan.data.exhausted_at_step === null ? 'never' : count(plan.data.exhausted_at_step)}</dd>
              </dl>
            </section>
          )}
          {plan.estimate && (
            <section>
              <h3>Estimate</h3>
              <dl class="facts">
                <dt>Step time</dt><dd>{seconds(plan.estimate.step_seconds)}</dd>
                <dt>TFLOP/s/device</dt><dd>{num(plan.estimate.tflops_per_device_per_step / plan.estimate.step_seconds)}</dd>
                <dt>Tokens/s/device</dt><dd>{num(plan.estimate.tokens_per_second_per_device)}</dd>
                <dt>MFU</dt><dd>{pct(plan.estimate.mfu)}</dd>
              </dl>
            </section>
          )}
          {plan.elastic && plan.elastic.length > 0 && <ElasticShapes shapes={plan.elastic} />}
        </>
      )}
    </aside>
  );
}

function MeshView({ plan }: { plan: Plan }) {
  const mesh = plan.mesh!;
  const used = mesh.axes.map((a, i) => ({ axis: a, ici: mesh.ici[i], dcn: mesh.dcn[i] }))
    .filter((x) => (x.ici !== undefined && x.ici !== 1) || (x.dcn !== undefined && x.dcn !== 1));
  const physical = plan.topology!.physical_mesh;
  return (
    <section class="mesh">
      <h3>Mesh</h3>
      <div class="mesh-row"><span class="muted small">physical</span>
        {physical.map((d, i) => <span key={i} class="mesh-cell physical" style={{ flexGrow: d }}>{d}</span>)}
      </div>
      <div class="mesh-row"><span class="muted small">logical ICI</span>
        {used.filter((x) => x.ici !== 1).map((x) => <span key={x.axis} class="mesh-cell logical" style={{ flexGrow: Math.max(1, Math.abs(x.ici)) }}>{x.axis} {x.ici === -1 ? 'auto' : x.ici}</span>)}
      </div>
      {used.some((x) => x.dcn !== 1) && (
        <div class="mesh-row"><span class="muted small">DCN</span>
          {used.filter((x) => x.dcn !== 1).map((x) => <span key={x.axis} class="mesh-cell dcn">{x.axis} {x.dcn === -1 ? 'auto' : x.dcn}</span>)}
        </div>
      )}
    </section>
  );
}

function MemoryBar({ memory }: { memory: NonNullable<Plan['memory']> }) {
  const cap = memory.capacity_gib || 0;
  const parts = Object.entries(memory.breakdown ?? {}).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const scale = Math.max(cap, memory.per_device_gib, memory.high_gib ?? 0) || 1;
  const verdict = memoryVerdict(memory);
  return (
    <section class="memory">
      <h3>HBM per device</h3>
      <p><strong class={verdict.tone} data-test="hbm-verdict">{gib(memory.per_device_gib)}</strong>
        {cap > 0 && <> of {gib(cap)} ({verdict.text})</>}
        {memory.low_gib !== undefined && memory.high_gib !== undefined && <span class="muted"> range {gib(memory.low_gib)}–{gib(memory.high_gib)}</span>}
        <span class="muted small"> basis: {memory.basis ?? 'estimate'}{memory.source ? <> ({memory.source.kind} {gib(memory.source.gib_per_device)} of <a href={`/runs/${memory.source.run}`}>{memory.source.run}</a>{memory.source.oom ? ', out of memory' : ''})</> : ''}</span>
      </p>
      <div class="hbm-bar" role="img" aria-label={`HBM ${gib(memory.per_device_gib)} of ${gib(cap)}`}>
        {parts.map(([k, v], i) => <span key={k} title={`${k}: ${gib(v)}`} style={{ width: `${(v / scale) * 100}%`, background: BREAKDOWN_COLORS[i % BREAKDOWN_COLORS.length] }} />)}
        {cap > 0 && <span class="capacity" style={{ left: `${(cap / scale) * 100}%` }} title={`capacity ${gib(cap)}`} />}
      </div>
      <ul class="legend">
        {parts.map(([k, v], i) => <li key={k}><span class="swatch" style={{ background: BREAKDOWN_COLORS[i % BREAKDOWN_COLORS.length] }} />{k.replace(/_/g, ' ')} {gib(v)}</li>)}
      </ul>
    </section>
  );
}

// An elastic run's shapes (min_slices up): the layout each slice count runs with and whether it
// plans; the dispatcher shrinks and grows only onto usable ones.
function ElasticShapes({ shapes }: { shapes: ElasticShape[] }) {
  return (
    <section>
      <h3>Elastic shapes</h3>
      <table class="elastic-shapes">
        <thead><tr><th>Slices</th><th>Verdict</th><th>DCN layout</th><th>HBM/device</th></tr></thead>
        <tbody>
          {shapes.map((s) => (
            <tr key={s.slices} data-elastic-slices={s.slices} data-verdict={s.verdict}>
              <td>{s.slices}</td>
              <td class={s.usable ? '' : 'bad'}>{s.verdict}{s.problems.length > 0 && <div class="hint">{s.problems.join('; ')}</div>}</td>
              <td>{s.changes.length > 0 ? s.changes.join(', ') : 'as written'}</td>
              <td>{s.memory_gib === null ? '–' : gib(s.memory_gib)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
