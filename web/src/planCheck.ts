// Plan against actual on the dashboard: a run's steady TFLOP/s/device against the planner's
// expectation (the server decides: backend/api/plan_check.h, engine/core/plan/plan_vs_actual.h). The
// run page's badge and the compare page's column read the same text: both figures and the ratio
// in format.ts's ratioText form.
import { num, ratioText } from './format';
import type { Run, Summary } from './types';

export type PlanCheck = NonNullable<Summary['plan_check']>;

/** The verdict to show: the summary's (decided or provisional), else the run's stored flag. */
export function planCheckOf(summary: Pick<Summary, 'plan_check'> | null | undefined,
  run?: Pick<Run, 'flags'> | null): PlanCheck | null {
  if (summary?.plan_check) return summary.plan_check;
  const flag = run?.flags?.underperforming;
  return flag ? { verdict: 'underperforming', ...flag } : null;
}

/** "0.577 TFLOP/s/device measured, 346.1 expected by the plan (0.00167×)". */
export function planCheckText(c: Pick<PlanCheck, 'tflops_per_device' | 'expected_tflops_per_device' | 'ratio'>): string {
  return `${num(c.tflops_per_device)} TFLOP/s/device measured, ${num(c.expected_tflops_per_device)} expected by the plan (${ratioText(c.ratio)})`;
}

/** Where the expectation comes from, for a tooltip. */
export function expectationBasisText(c: Pick<PlanCheck, 'expected_basis' | 'threshold' | 'steady_steps'>): string {
  const basis = c.expected_basis === 'plan' ? "the run's plan" : "the planner's default MFU for this model (no plan stored)";
  return `expected from ${basis}; underperforming below ${ratioText(c.threshold)} of it; measured over ${c.steady_steps} steady steps`;
}
