-- Preemption and termination notices (issue 14): an agent that hears from its host's metadata
-- server that the host is preempted or about to be terminated for maintenance says so in its
-- heartbeat. The worker takes no new ranks while its notice stands; the attempts it holds end
-- and are classified preempted (recovered without spending the restart budget).
ALTER TABLE workers ADD COLUMN notice text;
ALTER TABLE workers ADD COLUMN notice_at timestamptz;
ALTER TABLE attempts ADD COLUMN preemption_notice text;
