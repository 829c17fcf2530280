-- Servers keep recently verified credentials in memory (backend/common/credential_cache.h). A
-- change that can end or alter one tells every replica so, from the changing transaction: the
-- notification is delivered after the commit, and only if it commits. Row-level triggers with
-- WHEN clauses, so that the frequent writes to these rows (a token's last_used_at, a worker's
-- heartbeat) notify nothing. Several notifications in one transaction arrive as one.
CREATE FUNCTION podium_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('podium_auth', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER api_tokens_credentials_changed AFTER UPDATE ON api_tokens FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
        OR OLD.token_hash IS DISTINCT FROM NEW.token_hash
        OR OLD.user_id IS DISTINCT FROM NEW.user_id)
  EXECUTE FUNCTION podium_credentials_changed();
CREATE TRIGGER api_tokens_credentials_deleted AFTER DELETE ON api_tokens FOR EACH ROW
  EXECUTE FUNCTION podium_credentials_changed();

CREATE TRIGGER users_credentials_changed AFTER UPDATE ON users FOR EACH ROW
  WHEN (OLD.role IS DISTINCT FROM NEW.role
        OR OLD.disabled IS DISTINCT FROM NEW.disabled
        OR OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION podium_credentials_changed();
CREATE TRIGGER users_credentials_deleted AFTER DELETE ON users FOR EACH ROW
  EXECUTE FUNCTION podium_credentials_changed();

CREATE TRIGGER sessions_credentials_changed AFTER UPDATE ON sessions FOR EACH ROW
  WHEN (OLD.expires_at IS DISTINCT FROM NEW.expires_at
        OR OLD.user_id IS DISTINCT FROM NEW.user_id
        OR OLD.id_hash IS DISTINCT FROM NEW.id_hash)
  EXECUTE FUNCTION podium_credentials_changed();
CREATE TRIGGER sessions_credentials_deleted AFTER DELETE ON sessions FOR EACH ROW
  EXECUTE FUNCTION podium_credentials_changed();

CREATE TRIGGER workers_credentials_changed AFTER UPDATE ON workers FOR EACH ROW
  WHEN (OLD.credential_hash IS DISTINCT FROM NEW.credential_hash
        OR OLD.cluster_id IS DISTINCT FROM NEW.cluster_id)
  EXECUTE FUNCTION podium_credentials_changed();
CREATE TRIGGER workers_credentials_deleted AFTER DELETE ON workers FOR EACH ROW
  EXECUTE FUNCTION podium_credentials_changed();
