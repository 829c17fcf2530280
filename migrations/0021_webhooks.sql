-- Webhook notifications (issue 30 point 2; backend/notify). A subscription is a URL and the
-- event types it wants; each run event a subscription wants becomes one delivery row, written by
-- a trigger on run_events in the transaction that wrote the event: an event that committed has
-- its deliveries, one that rolled back has none, and nothing is lost when a server dies before
-- delivering (the row waits in PostgreSQL). Any replica's delivery loop takes due rows with
-- SELECT ... FOR UPDATE SKIP LOCKED, so exactly one replica works on a row at a time.
--
-- Why a trigger and not a cursor over run_events.id: bigserial ids are handed out at INSERT and
-- committed in any order, so a cursor that has passed id N can miss an event N-1 whose
-- transaction commits later. The trigger has no such gap and catches every writer of run_events
-- (backend/sched/lifecycle, the plan-against-actual sweep, the stall detector) without them
-- knowing about notifications.

CREATE TABLE webhooks (
  id         text PRIMARY KEY,
  seq        bigserial UNIQUE,
  owner_id   text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  url        text NOT NULL,
  events     text[] NOT NULL,
  -- The HMAC key, as issued: the server must recompute signatures, so it cannot be hashed. Only
  -- the delivery loop reads this column; no API answer after the creating one includes it and it
  -- is never logged (docs/ARCHITECTURE.md, "Webhook notifications").
  secret     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_owner_idx ON webhooks (owner_id, seq);

-- One event for one webhook: the outbox row and the delivery's current state. `body` is set by
-- the first attempt and sent unchanged by every retry (same event id, same bytes signed).
CREATE TABLE webhook_deliveries (
  id              bigserial PRIMARY KEY,
  webhook_id      text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id        bigint NOT NULL,  -- run_events.id (no foreign key: the log outlives a run)
  event_type      text NOT NULL,
  run_id          text NOT NULL,
  created_at      timestamptz NOT NULL,  -- the event's time: retries stop 24 h after it
  state           text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'delivered', 'given_up')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,  -- null once delivered or given up
  body            text,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE state = 'pending';
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id);

-- Every attempt: when, the HTTP status or the transport error, and the retry it scheduled.
CREATE TABLE webhook_attempts (
  id              bigserial PRIMARY KEY,
  delivery_id     bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  at              timestamptz NOT NULL,
  http_status     integer,
  error           text,
  duration_ms     integer NOT NULL,
  next_attempt_at timestamptz  -- null: delivered, or given up with this attempt
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);

-- The notification type of a run_events row, or null when nothing subscribes to such a row:
--   named kinds 'stalled' and 'underperforming'          -> run.stalled, run.underperforming
--   to running, after the run was recovering once         -> run.recovered, else run.started
--   to recovering when the attempt that ended was preempted -> run.preempted
--   to succeeded                                           -> run.succeeded
--   queued to failed (refused before it ever ran: its compile check or its launch)
--                                                          -> run.refused, else to failed: run.failed
-- Rows without a previous state (creation, import) and notes (from = to) notify nothing.
CREATE FUNCTION podium_webhook_event_type(ev run_events) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF ev.kind IN ('stalled', 'underperforming') THEN
    RETURN 'run.' || ev.kind;
  END IF;
  IF ev.kind <> 'state' OR ev.from_state IS NULL OR ev.from_state = ev.to_state THEN
    RETURN NULL;
  END IF;
  IF ev.to_state = 'running' THEN
    IF EXISTS (SELECT 1 FROM run_events p WHERE p.run_id = ev.run_id AND p.id < ev.id
               AND p.kind = 'state' AND p.to_state = 'recovering') THEN
      RETURN 'run.recovered';
    END IF;
    RETURN 'run.started';
  ELSIF ev.to_state = 'recovering' THEN
    IF (SELECT a.failure_class FROM attempts a WHERE a.run_id = ev.run_id
        ORDER BY a.number DESC LIMIT 1) = 'preempted' THEN
      RETURN 'run.preempted';
    END IF;
    RETURN NULL;
  ELSIF ev.to_state = 'succeeded' THEN
    RETURN 'run.succeeded';
  ELSIF ev.to_state = 'failed' THEN
    RETURN CASE WHEN ev.from_state = 'queued' THEN 'run.refused' ELSE 'run.failed' END;
  END IF;
  RETURN NULL;
END $$;

-- Fans a new event out to the webhooks that want it: a member's webhooks hear of their own
-- runs, an admin's of every run. Wakes the delivery loops (NOTIFY is sent at commit).
CREATE FUNCTION podium_webhook_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  wanted text;
  n integer;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks) THEN
    RETURN NULL;
  END IF;
  wanted := podium_webhook_event_type(NEW);
  IF wanted IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, run_id, created_at,
                                  next_attempt_at)
  SELECT w.id, NEW.id, wanted, NEW.run_id, NEW.at, NEW.at
    FROM webhooks w
    JOIN users u ON u.id = w.owner_id
   WHERE wanted = ANY (w.events)
     AND NOT u.disabled
     AND (u.role = 'admin' OR w.owner_id = (SELECT r.owner_id FROM runs r WHERE r.id = NEW.run_id))
  ON CONFLICT DO NOTHING;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN
    PERFORM pg_notify('podium_webhooks', '');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER run_events_webhooks AFTER INSERT ON run_events
  FOR EACH ROW EXECUTE FUNCTION podium_webhook_enqueue();
