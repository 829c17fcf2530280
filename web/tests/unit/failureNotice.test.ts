import { describe, expect, it } from 'vitest';
import type { VNode } from 'preact';
import { FailureNotice, failureNotice } from '../../src/components/FailureNotice';
import type { Run } from '../../src/types';

// The text a rendered vnode tree shows (no DOM here: the component's output is inspected).
function textOf(node: unknown): string {
  if (node === null || node === undefined || typeof node === 'boolean') return '';
  if (typeof node === 'string' || typeof node === 'number') return String(node);
  if (Array.isArray(node)) return node.map(textOf).join('');
  return textOf((node as VNode<{ children?: unknown }>).props.children);
}

const failed: Pick<Run, 'state' | 'failure_class' | 'failure_detail'> = {
  state: 'failed',
  failure_class: 'code_error',
  failure_detail: "rank 1 exited with code 1 before the first step: ModuleNotFoundError: No module named 'podium_no_such_module'",
};

describe('failure notice on the run page', () => {
  it("shows a code error's exception line", () => {
    const vnode = FailureNotice({ run: failed }) as VNode<Record<string, unknown>>;
    expect(vnode).not.toBeNull();
    expect(vnode.props['data-test']).toBe('failure-detail');
    const text = textOf(vnode);
    expect(text).toContain("ModuleNotFoundError: No module named 'podium_no_such_module'");
    expect(text).toContain('Code or environment error (not retried)');
  });
  it('names other classes by their class', () => {
    expect(failureNotice({ ...failed, failure_class: 'error', failure_detail: 'rank 0 exited with code 3' }))
      .toEqual({ label: 'Failed (error)', detail: 'rank 0 exited with code 3' });
    expect(failureNotice({ ...failed, failure_class: 'oom' })?.label).toBe('Out of HBM (not retried)');
  });
  it('shows nothing for a run that did not fail or has no detail', () => {
    expect(FailureNotice({ run: { ...failed, state: 'running' } })).toBeNull();
    expect(FailureNotice({ run: { ...failed, failure_detail: null } })).toBeNull();
    expect(FailureNotice({ run: { state: 'failed', failure_class: 'error', failure_detail: '' } })).toBeNull();
  });
});
