-- Stall detection (backend/sched/dispatch/stall_watch.h): the stall a running attempt is in, as
-- its run_events row of kind 'stalled' recorded it ({"phase","last_step","silence_seconds",
-- "bound_seconds",...}, backend/sched/stall_bound.h); null while it is not stalled. A run's flags
-- hold "stalled" while its live attempt has one; a step logged after it clears it.
ALTER TABLE attempts ADD COLUMN stall jsonb;
