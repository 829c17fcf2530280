-- Which MaxText a host has decides how it is launched (engine/core/maxtext_launch.h): the agent
-- reports its software when it registers (Python, jax, jaxlib, libtpu, maxtext and the MaxText
-- module layout it found importable); a cluster may declare the MaxText version its hosts run.
ALTER TABLE workers ADD COLUMN software jsonb;
ALTER TABLE clusters ADD COLUMN maxtext_version text NOT NULL DEFAULT 'auto';
