// /clusters and /clusters/{name}: capacity, price, the slices × hosts grid, provisioning; for
// admins the new-cluster form, the settings and launch policy editors, worker tokens, and Delete.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, Empty, ErrorBox, Loading, usePoll } from '../components/ui';
import { ago, count, executorLabel, money } from '../format';
import { canManageClusters } from '../clusterForm';
import { useMe } from '../session';
import type { Worker } from '../types';
import { NewClusterForm } from './NewCluster';
import { ClusterSettings, DeleteCluster } from './ClusterSettings';
import { WorkerTokens } from './WorkerTokens';

// A per-slice figure for the whole cluster; unknown when the stored accelerator type is no longer
// in the catalog (the server then sends only its `type`).
const allSlices = (perSlice: number | undefined, slices: number) => (perSlice === undefined ? undefined : perSlice * slices);

export function Clusters() {
  const q = usePoll(() => api.clusters(), [], 10000);
  const admin = canManageClusters(useMe());
  const [creating, setCreating] = useState(false);
  return (
    <main>
      <header class="page-head"><h1>Clusters</h1>
        {admin && !creating && <button type="button" class="primary" onClick={() => setCreating(true)}>New cluster</button>}
      </header>
      {creating && <NewClusterForm onCancel={() => setCreating(false)} />}
      <ErrorBox error={q.error} />
      {!q.data ? <Loading /> : q.data.items.length === 0 ? <Empty>No clusters yet. {admin ? <>Press <em>New cluster</em>, or use</> : 'An admin creates one with'} <code>podium clusters create</code> or <code>POST /api/v1/clusters</code>.</Empty> : (
        <table class="data">
          <thead><tr><th>Name</th><th>Accelerator</th><th class="num">Slices</th><th class="num">Chips</th><th class="num">Hosts healthy / expected</th><th>Capacity</th><th>Zone</th><th class="num">$/chip-hour</th></tr></thead>
          <tbody>{q.data.items.map((c) => (
            <tr key={c.id}><td><a href={`/clusters/${encodeURIComponent(c.name)}`}>{c.name}</a></td>
              <td>{c.accelerator.type}{c.accelerator.topology ? ` (${c.accelerator.topology})` : ''}</td>
              <td class="num">{c.num_slices}</td><td class="num">{count(allSlices(c.accelerator.chips_per_slice, c.num_slices))}</td>
              <td class="num"><span class={c.hosts.healthy < c.hosts.expected ? 'warn' : 'good'}>{c.hosts.healthy}</span> / {c.hosts.expected}</td>
              <td>{c.capacity}</td><td>{c.zone || '–'}</td><td class="num">{money(c.price_per_chip_hour)}</td></tr>
          ))}</tbody>
        </table>
      )}
    </main>
  );
}

export function ClusterPage({ name }: { name: string }) {
  const cq = usePoll(() => api.cluster(name), [name], 10000);
  const wq = usePoll(() => api.workers(name), [name], 3000);
  const pq = usePoll(() => api.provisioning(name), [name], 0, false);
  const runs = usePoll(() => api.runs({ cluster: name, limit: 50 }), [name], 5000);
  const activeIds = (runs.data?.items ?? [])
    .filter((r) => ['starting', 'running', 'recovering', 'cancelling'].includes(r.state))
    .map((r) => r.id).join(',');
  // Which run and rank each host holds now: the live attempts of the cluster's active runs.
  const assignments = usePoll(async () => {
    const out = new Map<string, { run: string; name: string; rank: number }>();
    for (const r of (runs.data?.items ?? []).filter((x) => activeIds.split(',').includes(x.id))) {
      const att = await api.attempts(r.id);
      for (const a of att.items.filter((x) => !x.ended_at)) {
        for (const h of a.hosts) if (h.worker_id && !h.ended_at) out.set(h.worker_id, { run: r.id, name: r.name, rank: h.rank });
      }
    }
    return out;
  }, [name, activeIds], 5000);
  const c = cq.data;
  if (cq.error && !c) return <main><ErrorBox error={cq.error} /></main>;
  if (!c) return <main><Loading /></main>;
  const workers = wq.data?.items ?? [];
  const bySlot = new Map<string, Worker>(workers.map((w) => [`${w.slice}/${w.host}`, w]));
  const active = (runs.data?.items ?? []).filter((r) => ['starting', 'running', 'recovering', 'cancelling'].includes(r.state));
  const chips = allSlices(c.accelerator.chips_per_slice, c.num_slices);
  return (
    <main>
      <header class="page-head"><div><h1>{c.name}</h1><p class="muted">{c.accelerator.type}{c.accelerator.topology ? ` (${c.accelerator.topology})` : ''} × {c.num_slices} slices · {c.capacity} · {c.zone || 'no zone'} · {executorLabel(c)}</p></div>
        <DeleteCluster name={c.name} /></header>
      <section class="cards">
        <div class="card"><span class="label">Chips</span><strong>{count(chips)}</strong></div>
        <div class="card"><span class="label">Devices</span><strong>{count(allSlices(c.accelerator.devices_per_slice, c.num_slices))}</strong></div>
        <div class="card"><span class="label">Hosts healthy</span><strong>{c.hosts.healthy} / {c.hosts.expected}</strong></div>
        <div class="card"><span class="label">Price</span><strong>{c.price_per_chip_hour === null ? '–' : `${money(c.price_per_chip_hour)}/chip-h`}</strong>
          {c.price_per_chip_hour !== null && chips !== undefined && <span class="muted small">{money(c.price_per_chip_hour * chips)} per hour</span>}</div>
      </section>
      <section>
        <h2>Hosts</h2>
        <p class="muted small">Running here: {active.length ? active.map((r) => <a key={r.id} href={`/runs/${r.id}`}>{r.name} </a>) : 'nothing'}</p>
        <div class="host-grid" role="table" aria-label="slices by hosts">
          {Array.from({ length: c.num_slices }, (_, s) => (
            <div class="host-row" role="row" key={s}>
              <span class="muted small" role="rowheader">slice {s}</span>
              {Array.from({ length: c.accelerator.hosts_per_slice ?? 0 }, (_, h) => {
                const w = bySlot.get(`${s}/${h}`);
                const status = !w ? 'missing' : w.notice ? 'notice' : w.healthy ? 'healthy' : 'silent';
                return (
                  <div role="cell" key={h} class={`host ${status}`} title={w ? `${w.hostname} ${w.address} · v${w.version} · heartbeat ${ago(w.last_heartbeat_at)}` : 'no agent registered'}>
                    <strong>h{h}</strong> <span>{status}</span>
                    {w && <span class="small">{w.hostname} · v{w.version}</span>}
                    {w && <span class="small">{ago(w.last_heartbeat_at)}</span>}
                    {w?.notice && <span class="small" title={`since ${w.notice_at ?? ''}`}>{w.notice}</span>}
                    {w && assignments.data?.get(w.id) && (
                      <a class="small" href={`/runs/${assignments.data.get(w.id)!.run}`}>{assignments.data.get(w.id)!.name} r{assignments.data.get(w.id)!.rank}</a>
                    )}
                  </div>
                );
              })}
            </div>
          ))}
        </div>
      </section>
      <ClusterSettings key={c.id} cluster={c} onSaved={(u) => { cq.setData(u); pq.reload(); }} />
      <WorkerTokens key={`wt-${c.id}`} cluster={c} />
      <section>
        <h2>Provisioning</h2>
        <ErrorBox error={pq.error} />
        {(pq.data?.options ?? []).map((o, i) => (
          <div key={i} class="provision">
            <h3>{o.method} <span class="muted small">{o.description}</span></h3>
            {o.commands.map((cmd, j) => <div key={j} class="command"><pre>{cmd}</pre><CopyButton text={cmd} /></div>)}
            {(o.notes ?? []).map((n, j) => <p key={j} class="muted small">{n}</p>)}
            {(o.missing ?? []).map((m, j) => <p key={`m${j}`} class="small">missing {m}</p>)}
            {(o.teardown ?? []).length > 0 && (
              <details>
                <summary class="small">teardown</summary>
                {(o.teardown ?? []).map((cmd, j) => <div key={j} class="command"><pre>{cmd}</pre><CopyButton text={cmd} /></div>)}
              </details>
            )}
          </div>
        ))}
      </section>
    </main>
  );
}

