// The run page's plan-against-actual badge: shown when the run is underperforming, with the
// measured and the expected TFLOP/s/device (data attributes carry the raw figures for tests).
import { expectationBasisText, planCheckText, type PlanCheck } from '../planCheck';

export function PlanCheckBadge({ check }: { check: PlanCheck | null }) {
  if (!check || check.verdict !== 'underperforming') return null;
  return (
    <span class="badge underperforming" data-test="underperforming-badge"
      data-tflops={check.tflops_per_device} data-expected={check.expected_tflops_per_device}
      title={expectationBasisText(check)}>
      underperforming · {planCheckText(check)}
    </span>
  );
}
