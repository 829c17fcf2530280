// Why a failed run failed, in one line on its page: the server's failure_detail (for a
// code_error the traceback's exception line, "ModuleNotFoundError: No module named 'x'"), under
// the state badge that already names the class.
import type { Run } from '../types';

type FailedRun = Pick<Run, 'state' | 'failure_class' | 'failure_detail'>;

// What each class means for the user, where the class name alone does not say it.
const CLASS_LABELS: Record<string, string> = {
  code_error: 'Code or environment error (not retried)',
  oom: 'Out of HBM (not retried)',
  mesh: 'Mesh does not fit (not retried)',
  config: 'Configuration error (not retried)',
  nan: 'NaN loss (not retried)',
  data_exhausted: 'Dataset exhausted (not retried)',
};

/** The notice's label and detail, or null when the run did not fail or no detail is known. */
export function failureNotice(run: FailedRun): { label: string; detail: string } | null {
  if (run.state !== 'failed' || !run.failure_detail) return null;
  const cls = run.failure_class ?? 'error';
  return { label: CLASS_LABELS[cls] ?? `Failed (${cls})`, detail: run.failure_detail };
}

export function FailureNotice({ run }: { run: FailedRun }) {
  const notice = failureNotice(run);
  if (!notice) return null;
  return (
    <p class="notice failure" role="alert" data-test="failure-detail">
      <strong>{notice.label}:</strong> <code>{notice.detail}</code>
    </p>
  );
}
