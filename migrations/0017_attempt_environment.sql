-- The environment each attempt ran with (issue 27, point 5).
-- attempt_hosts.environment: what the rank's agent found just before starting it, probing the
-- rank's own Python with the rank's environment and working directory (python, jax, jaxlib,
-- libtpu and maxtext versions, and the git commit of the working directory when it is a
-- checkout); sent with the rank's `running` status report.
-- attempts.environment: what the server knew of the code when the attempt was created: the code
-- bundle's digest and, on Kubernetes, the image (the run's, else the cluster's). Filled by a
-- trigger so that every path creating an attempt (agent placement, external executors, compile
-- checks) records it the same way, from the run and cluster rows of that moment.
ALTER TABLE attempt_hosts ADD COLUMN environment jsonb;
ALTER TABLE attempts ADD COLUMN environment jsonb;

CREATE FUNCTION podium_attempt_environment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT jsonb_strip_nulls(jsonb_build_object(
           'code_digest', r.code_bundle,
           'image', CASE WHEN c.executor->>'kind' = 'kubernetes'
                         THEN COALESCE(r.spec->>'image', c.executor->>'image') END))
    INTO NEW.environment
    FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id
   WHERE r.id = NEW.run_id;
  RETURN NEW;
END;
$$;

CREATE TRIGGER attempts_environment BEFORE INSERT ON attempts FOR EACH ROW
  EXECUTE FUNCTION podium_attempt_environment();
