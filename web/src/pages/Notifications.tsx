// /settings/notifications: the caller's webhooks (an admin's list holds everyone's): subscribe a
// URL to run events (the signing secret is shown once), delete, and each webhook's delivery log
// (every attempt with its time, HTTP status or error, and the retry it scheduled).
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, Empty, ErrorBox, Loading, usePoll } from '../components/ui';
import { ago } from '../format';
import type { Answer, RequestBody } from '../types';

type Webhook = Answer<'listWebhooks'>['items'][number];
type Delivery = Answer<'listWebhookDeliveries'>['items'][number];
type EventType = RequestBody<'createWebhook'>['events'][number];

/** The events a webhook can subscribe to (docs/openapi.yaml WebhookEventType), with what they mean. */
export const WEBHOOK_EVENTS: [EventType, string][] = [
  ['run.started', 'started running'],
  ['run.succeeded', 'succeeded'],
  ['run.failed', 'failed'],
  ['run.stalled', 'stalled (no new step)'],
  ['run.preempted', 'preempted'],
  ['run.recovered', 'running again after a recovery'],
  ['run.underperforming', 'far below its plan'],
  ['run.refused', 'refused before it ran'],
];

const webhooks = {
  list: () => api.request<Answer<'listWebhooks'>>('GET', '/webhooks?limit=500'),
  create: (body: RequestBody<'createWebhook'>) => api.request<Answer<'createWebhook'>>('POST', '/webhooks', body),
  remove: (id: string) => api.request<void>('DELETE', `/webhooks/${encodeURIComponent(id)}`),
  deliveries: (id: string) =>
    api.request<Answer<'listWebhookDeliveries'>>('GET', `/webhooks/${encodeURIComponent(id)}/deliveries?limit=100`),
};

function DeliveryLog({ webhook }: { webhook: Webhook }) {
  const q = usePoll(() => webhooks.deliveries(webhook.id), [webhook.id], 5000);
  if (q.error) return <ErrorBox error={q.error} />;
  if (!q.data) return <Loading />;
  if (q.data.items.length === 0) return <Empty>No deliveries yet.</Empty>;
  return (
    <table class="data" data-test="webhook-deliveries">
      <thead><tr><th>Event</th><th>Run</th><th>State</th><th>Attempts</th><th>Next retry</th></tr></thead>
      <tbody>{q.data.items.map((d: Delivery) => (
        <tr key={d.id}>
          <td><code>{d.type}</code> <span class="muted small">{d.event_id} · {ago(d.created_at)}</span></td>
          <td><a href={`/runs/${encodeURIComponent(d.run_id)}`}>{d.run_id}</a></td>
          <td>{d.state === 'given_up' ? 'given up' : d.state}</td>
          <td><ol class="attempts">{d.attempts.map((a, i) => (
            <li key={i}>{ago(a.at)}: {a.http_status !== null ? `HTTP ${a.http_status}` : 'no answer'}
              {a.error ? ` (${a.error})` : ''} <span class="muted small">{a.duration_ms} ms</span></li>
          ))}</ol></td>
          <td>{d.next_attempt_at ? ago(d.next_attempt_at) : '—'}</td>
        </tr>
      ))}</tbody>
    </table>
  );
}

export function Notifications() {
  const q = usePoll(() => webhooks.list(), [], 0, false);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>(['run.succeeded', 'run.failed', 'run.stalled']);
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const toggle = (e: EventType, on: boolean) =>
    setEvents((cur) => (on ? [...cur.filter((x) => x !== e), e] : cur.filter((x) => x !== e)));
  const create = async (ev: Event) => {
    ev.preventDefault();
    try {
      const w = await webhooks.create({ url, events: WEBHOOK_EVENTS.map(([e]) => e).filter((e) => events.includes(e)) });
      setCreated({ id: w.id, secret: w.secret });
      setUrl('');
      setError(null);
      q.reload();
    } catch (err) { setError(err); }
  };
  const remove = async (id: string) => {
    if (!confirm('Delete this webhook? Its pending deliveries and its log go with it.')) return;
    try { await webhooks.remove(id); if (open === id) setOpen(null); q.reload(); } catch (err) { setError(err); }
  };

  return (
    <main>
      <header class="page-head"><h1>Notifications</h1></header>
      <p class="muted">Run events are POSTed as JSON to each webhook, signed with its secret
        (<code>Podium-Signature: t=…,v1=HMAC-SHA256(secret, "t.body")</code>); the <code>text</code> field
        suits a Slack incoming webhook. Failed deliveries are retried for 24 hours.</p>
      <form class="stack" onSubmit={create} data-test="webhook-form">
        <label>URL <input type="url" value={url} required maxLength={2048} placeholder="https://hooks.slack.com/services/…"
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)} /></label>
        <fieldset><legend>Events</legend>
          {WEBHOOK_EVENTS.map(([e, meaning]) => (
            <label key={e} class="check"><input type="checkbox" name="event" value={e} checked={events.includes(e)}
              onChange={(x) => toggle(e, (x.target as HTMLInputElement).checked)} /> <code>{e}</code> <span class="muted small">{meaning}</span></label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={events.length === 0}>Add webhook</button>
      </form>
      {created && (
        <div class="notice" role="status" data-test="webhook-secret">Signing secret of {created.id} (shown once):{' '}
          <code class="secret">{created.secret}</code> <CopyButton text={created.secret} /></div>
      )}
      <ErrorBox error={error || q.error} />
      {!q.data ? <Loading /> : q.data.items.length === 0 ? <Empty>No webhooks.</Empty> : (
        <table class="data" data-test="webhooks-table">
          <thead><tr><th>URL</th><th>Events</th><th>Owner</th><th>Created</th><th /></tr></thead>
          <tbody>{q.data.items.map((w) => (
            <Fragment key={w.id}>
              <tr data-webhook={w.id}>
                <td><code>{w.url}</code></td>
                <td>{w.events.join(', ')}</td>
                <td>{w.owner}</td>
                <td>{ago(w.created_at)}</td>
                <td>
                  <button type="button" class="small" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>
                    {open === w.id ? 'Hide log' : 'Delivery log'}</button>{' '}
                  <button type="button" class="danger small" onClick={() => remove(w.id)}>Delete</button>
                </td>
              </tr>
              {open === w.id && <tr><td colSpan={5}><DeliveryLog webhook={w} /></td></tr>}
            </Fragment>
          ))}</tbody>
        </table>
      )}
    </main>
  );
}
