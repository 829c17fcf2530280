// Stall detection on the dashboard: a run whose live attempt logged no step within its bound
// (the server decides: backend/sched/stall_bound.h, backend/sched/dispatch/stall_watch.h) is
// flagged `stalled` with the stall's figures; the run page and the runs list show the same badge.
import type { Run } from './types';

export type Stall = NonNullable<NonNullable<Run['flags']>['stalled']>;

/** The stall to show, from the run's flags. */
export function stallOf(run?: Pick<Run, 'flags'> | null): Stall | null {
  return run?.flags?.stalled ?? null;
}

function secs(s: number): string {
  return s >= 10 ? `${Math.round(s)} s` : `${s.toFixed(1)} s`;
}

/** "no step for 42 s after step 17" / "no first step 1801 s after start". */
export function stallText(s: Pick<Stall, 'last_step' | 'silence_seconds'>): string {
  return s.last_step === null
    ? `no first step ${secs(s.silence_seconds)} after start`
    : `no step for ${secs(s.silence_seconds)} after step ${s.last_step}`;
}

const ACTIONS: Record<Stall['on_stall'], string> = {
  alert: 'only recorded (on_stall alert)',
  restart: 'being restarted from its latest checkpoint (on_stall restart)',
  fail: 'being ended as failed (on_stall fail)',
};

/** How the bound was derived and what Podium does about it, for a tooltip. */
export function stallDetailText(s: Pick<Stall, 'bound_seconds' | 'derivation' | 'on_stall'>): string {
  return `bound ${secs(s.bound_seconds)}: ${s.derivation}; ${ACTIONS[s.on_stall] ?? s.on_stall}`;
}
