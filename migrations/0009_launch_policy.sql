-- Who may decide what runs on a cluster's hosts (issue 13.5, engine/core/launch_policy.h):
-- the roles that may submit command workloads, name any entrypoint or set code-selecting
-- environment variables; the entrypoints everyone else may name; the roles that may submit code
-- bundles. '{}' is the default policy: commands for admins only, no extra entrypoints, bundles
-- for admins and members. Existing clusters take the default: members lose command workloads
-- until an admin grants them with PATCH /api/v1/clusters/{id} {"launch_policy": ...}.
ALTER TABLE clusters ADD COLUMN launch_policy jsonb NOT NULL DEFAULT '{}'::jsonb;
