import { describe, expect, it } from 'vitest';
import { configDiff } from '../../src/compare';
import { environmentEntries, environmentForDiff, shortDigest } from '../../src/environment';
import type { AttemptEnvironment } from '../../src/types';

const env = (over: Partial<AttemptEnvironment>): AttemptEnvironment => ({
  python: '3.11.2', jax: '0.10.2', jaxlib: '0.10.2', libtpu: null, maxtext: '0.2.0', git_commit: null,
  maxtext_commit: null, code_digest: null, image: null, ranks_reported: 2, differs: [], ...over,
});

describe('attempt environment', () => {
  it('lists the known parts in order, commits and digests shortened', () => {
    const e = environmentEntries(env({ git_commit: '0123456789abcdef0123456789abcdef01234567', code_digest: 'sha256:' + 'ab'.repeat(32) }));
    expect(e.map((x) => x.label)).toEqual(['Python', 'jax', 'jaxlib', 'MaxText', 'git commit', 'code']);
    expect(e.find((x) => x.key === 'git_commit')!.value).toBe('0123456789ab');
    expect(e.find((x) => x.key === 'code_digest')!.value).toBe('sha256:abababababab');
    expect(environmentEntries(null)).toEqual([]);
  });
  it('shortens only what is long', () => {
    expect(shortDigest('abc1234')).toBe('abc1234');
  });
  it('shows as a configuration difference on compare', () => {
    const diff = configDiff([{ environment: environmentForDiff(env({})) }, { environment: environmentForDiff(env({ jax: '0.9.0', maxtext: '0.1.0' })) }, { environment: environmentForDiff(null) }]);
    expect(diff.map((d) => d.key)).toEqual(['environment.jax', 'environment.jaxlib', 'environment.maxtext', 'environment.python']);
    expect(diff.find((d) => d.key === 'environment.jax')!.values).toEqual(['"0.10.2"', '"0.9.0"', 'null']);
  });
});
