import { api } from '../api';
import { Empty, ErrorBox, Loading, usePoll } from '../components/ui';
import { ago, count } from '../format';

export function Datasets() {
  const q = usePoll(() => api.datasets(), [], 0, false);
  return (
    <main>
      <header class="page-head"><h1>Datasets</h1></header>
      <ErrorBox error={q.error} />
      {!q.data ? <Loading /> : q.data.items.length === 0 ? <Empty>No datasets registered (<code>POST /api/v1/datasets</code>).</Empty> : (
        <table class="data">
          <thead><tr><th>Name</th><th>URI</th><th>Format</th><th class="num">Records</th><th class="num">Bytes</th><th class="num">Tokens</th><th>Created</th></tr></thead>
          <tbody>{q.data.items.map((d) => (
            <tr key={d.id}><td>{d.name}</td><td><code>{d.uri}</code></td><td>{d.format}</td><td class="num">{count(d.records)}</td><td class="num">{count(d.bytes)}</td><td class="num">{count(d.tokens)}</td><td>{ago(d.created_at)}</td></tr>
          ))}</tbody>
        </table>
      )}
    </main>
  );
}
