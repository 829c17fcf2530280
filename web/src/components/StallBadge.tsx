// The stalled badge (run page and runs list): shown while the run's live attempt is stalled,
// with how long it has been silent; the tooltip says how the bound was derived and what
// happens next. Data attributes carry the raw figures for tests.
import { stallDetailText, stallOf, stallText } from '../stall';
import type { Run } from '../types';

export function StallBadge({ run, compact = false }: { run: Pick<Run, 'flags'> | null; compact?: boolean }) {
  const stall = stallOf(run);
  if (!stall) return null;
  return (
    <span class="badge stalled" data-test="stall-badge" data-last-step={stall.last_step ?? ''}
      data-bound={stall.bound_seconds} data-on-stall={stall.on_stall} title={stallDetailText(stall)}>
      stalled{compact ? '' : ` · ${stallText(stall)}`}
    </span>
  );
}
