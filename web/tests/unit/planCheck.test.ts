import { describe, expect, it } from 'vitest';
import { expectationBasisText, planCheckOf, planCheckText, type PlanCheck } from '../../src/planCheck';

// The seed's tpu7x 2x2x1 run: 0.577 TFLOP/s/device against the planner's 346 (MoE, 30 % MFU).
const seed: PlanCheck = {
  verdict: 'underperforming', tflops_per_device: 0.577, expected_tflops_per_device: 346.05,
  ratio: 0.577 / 346.05, threshold: 0.1, steady_steps: 25, expected_basis: 'planner_default',
  decided_at: '2026-11-21T16:50:00.000000Z', at_step: 29,
};

describe('plan against actual', () => {
  it('shows both figures and the ratio in ratioText form', () => {
    expect(planCheckText(seed)).toBe('0.577 TFLOP/s/device measured, 346.1 expected by the plan (0.00167×)');
    expect(planCheckText({ tflops_per_device: 330, expected_tflops_per_device: 367.2, ratio: 330 / 367.2 })).toBe(
      '330 TFLOP/s/device measured, 367.2 expected by the plan (0.899×)');
  });
  it('says where the expectation comes from', () => {
    expect(expectationBasisText(seed)).toBe(
      "expected from the planner's default MFU for this model (no plan stored); underperforming below 0.10× of it; measured over 25 steady steps");
    expect(expectationBasisText({ ...seed, expected_basis: 'plan' })).toContain("the run's plan");
  });
  it("takes the summary's verdict, else the run's flag", () => {
    const { verdict: _v, ...flag } = seed;
    expect(planCheckOf({ plan_check: seed }, { flags: {} })).toBe(seed);
    expect(planCheckOf({ plan_check: null }, { flags: { underperforming: { ...flag, decided_at: seed.decided_at! } } })?.verdict).toBe('underperforming');
    expect(planCheckOf(null, { flags: {} })).toBeNull();
    expect(planCheckOf(undefined, null)).toBeNull();
  });
});
