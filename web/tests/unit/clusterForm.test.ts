import { describe, expect, it } from 'vitest';
import {
  canManageClusters, DEFAULT_POLICY, EMPTY_CLUSTER_FORM, formatLabels, formToPolicy, isEmptyPatch,
  newClusterBody, parseEntrypoints, parseLabels, policyOf, policyPatch, policyToForm, rolesText,
  settingsPatch, settingsToForm,
} from '../../src/clusterForm';
import type { FieldError } from '../../src/spec';
import type { Cluster, LaunchPolicy } from '../../src/types';

const cluster = (over: Partial<Cluster> = {}): Cluster => ({
  id: 'clu_1', name: 'v7', num_slices: 2, capacity: 'spot', zone: 'us-central1-c', project: '', reservation: '',
  network: '', price_per_chip_hour: 1.5, labels: { team: 'llm', pool: 'a' },
  accelerator: { type: 'tpu7x-64', family: 'tpu7x', topology: '2x4x4', chips_per_slice: 32, devices_per_slice: 64, hosts_per_slice: 8, physical_mesh: [2, 4, 4, 2], peak_tflops_per_device: 1153.5, hbm_gib_per_device: 96 },
  hosts: { expected: 16, registered: 0, healthy: 0 }, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', maxtext_version: 'auto',
  executor: { kind: 'agent' },
  launch_policy: { command_roles: ['admin'], entrypoints: [], code_bundle_roles: ['admin', 'member'] },
  checkpoint_retention: null,
  ...over,
});

describe('labels', () => {
  it('reads key=value lines, skipping blanks and comments, keeping "=" in values', () => {
    const errors: FieldError[] = [];
    expect(parseLabels(' team = llm \n\n# note\nquery=a=b\nempty=', errors)).toEqual({ team: 'llm', query: 'a=b', empty: '' });
    expect(errors).toEqual([]);
  });
  it('names each bad line by its number', () => {
    const errors: FieldError[] = [];
    parseLabels('team=llm\nnonsense\n=v\nteam=other', errors);
    expect(errors.map((e) => e.message)).toEqual([
      'line 2: "nonsense" is not key=value',
      'line 3: "=v" has no key before "="',
      'line 4: "team" is already set on line 1',
    ]);
    expect(errors.every((e) => e.field === 'labels')).toBe(true);
  });
  it('round-trips through the text form', () => {
    const labels = { team: 'llm', pool: 'v7=x' };
    expect(parseLabels(formatLabels(labels))).toEqual(labels);
    expect(formatLabels(undefined)).toBe('');
  });
});

describe('entrypoints', () => {
  it('takes modules and absolute paths, one a line, repeats once', () => {
    const errors: FieldError[] = [];
    expect(parseEntrypoints('MaxText.train\n /opt/maxtext/train.sh \n\nMaxText.train', errors)).toEqual(['MaxText.train', '/opt/maxtext/train.sh']);
    expect(errors).toEqual([]);
  });
  it('refuses what the server would, naming the line', () => {
    for (const bad of ['train.sh --x', 'opt/train.sh', '/opt/../bin/sh', '/opt/', '/', '1module', 'MaxText..train', '/opt//x', '/opt/./x']) {
      const errors: FieldError[] = [];
      expect(parseEntrypoints(`ok.module\n${bad}`, errors)).toEqual(['ok.module']);
      expect(errors).toHaveLength(1);
      expect(errors[0].field).toBe('entrypoints');
      expect(errors[0].message).toContain('line 2');
    }
  });
});

describe('new cluster body', () => {
  it('sends the fields given and leaves empty optional ones to the server', () => {
    const { body, errors } = newClusterBody({ ...EMPTY_CLUSTER_FORM, name: ' v7-train ', accelerator: 'tpu7x-64', num_slices: '2', capacity: 'spot', zone: 'us-central1-c', price_per_chip_hour: '1.25', labels: 'team=llm' });
    expect(errors).toEqual([]);
    expect(body).toEqual({ name: 'v7-train', accelerator: 'tpu7x-64', num_slices: 2, capacity: 'spot', zone: 'us-central1-c', price_per_chip_hour: 1.25, labels: { team: 'llm' } });
  });
  it('leaves ranges to the server but refuses text that is not a number', () => {
    expect(newClusterBody({ ...EMPTY_CLUSTER_FORM, name: 'a', accelerator: 'cpu-2', num_slices: '0' })).toMatchObject({ body: { num_slices: 0 }, errors: [] });
    expect(newClusterBody({ ...EMPTY_CLUSTER_FORM, name: 'a', accelerator: 'cpu-2', num_slices: '' }).body.num_slices).toBeUndefined();
    const { errors } = newClusterBody({ ...EMPTY_CLUSTER_FORM, num_slices: '1.5', price_per_chip_hour: 'cheap', labels: 'x' });
    expect(errors.map((e) => e.field).sort()).toEqual(['labels', 'num_slices', 'price_per_chip_hour']);
  });
});

describe('settings patch', () => {
  it('is empty for an untouched form', () => {
    const c = cluster();
    const { patch, errors } = settingsPatch(settingsToForm(c), c);
    expect(errors).toEqual([]);
    expect(isEmptyPatch(patch)).toBe(true);
  });
  it('carries only what changed; labels whole', () => {
    const c = cluster();
    const form = { ...settingsToForm(c), price_per_chip_hour: '2.5', labels: 'pool=a\nteam=research', zone: ' us-east5-a ' };
    expect(settingsPatch(form, c)).toEqual({ patch: { price_per_chip_hour: 2.5, zone: 'us-east5-a', labels: { pool: 'a', team: 'research' } }, errors: [] });
  });
  it('treats reordered labels as unchanged and an emptied price as null', () => {
    const c = cluster();
    expect(settingsPatch({ ...settingsToForm(c), labels: 'pool=a\nteam=llm' }, c).patch).toEqual({});
    expect(settingsPatch({ ...settingsToForm(c), price_per_chip_hour: '' }, c).patch).toEqual({ price_per_chip_hour: null });
    expect(settingsPatch({ ...settingsToForm(c), labels: '' }, c).patch).toEqual({ labels: {} });
  });
  it('sends slices, capacity and the GCP fields when changed, "" clearing', () => {
    const c = cluster({ project: 'my-proj' });
    const { patch } = settingsPatch({ ...settingsToForm(c), num_slices: '4', capacity: 'reservation', project: '', reservation: 'r1', network: 'vpc' }, c);
    expect(patch).toEqual({ num_slices: 4, capacity: 'reservation', project: '', reservation: 'r1', network: 'vpc' });
  });
  it('refuses an empty or fractional slice count and a bad label line', () => {
    const c = cluster();
    expect(settingsPatch({ ...settingsToForm(c), num_slices: '' }, c).errors).toEqual([{ field: 'num_slices', message: 'is required' }]);
    expect(settingsPatch({ ...settingsToForm(c), num_slices: '2.5' }, c).errors[0].field).toBe('num_slices');
    expect(settingsPatch({ ...settingsToForm(c), labels: 'team' }, c).errors[0].message).toBe('line 1: "team" is not key=value');
  });
});

describe('launch policy', () => {
  it('fills a missing policy with the defaults', () => {
    expect(policyOf(cluster({ launch_policy: undefined }))).toEqual(DEFAULT_POLICY);
  });
  it('round-trips through the form', () => {
    const p: LaunchPolicy = { command_roles: ['admin', 'member'], entrypoints: ['MaxText.train', '/opt/x.sh'], code_bundle_roles: [] };
    expect(formToPolicy(policyToForm(p))).toEqual(p);
  });
  it('is unchanged when only the order of roles differs', () => {
    const c = cluster({ launch_policy: { command_roles: ['member', 'admin'], entrypoints: [], code_bundle_roles: ['admin', 'member'] } });
    expect(policyPatch(policyToForm(policyOf(c)), c).patch).toEqual({});
  });
  it('sends the whole policy when any part changed', () => {
    const c = cluster();
    const form = policyToForm(policyOf(c));
    form.command_roles.member = true;
    form.entrypoints = '/opt/maxtext/train.sh';
    expect(policyPatch(form, c)).toEqual({
      patch: { launch_policy: { command_roles: ['admin', 'member'], entrypoints: ['/opt/maxtext/train.sh'], code_bundle_roles: ['admin', 'member'] } },
      errors: [],
    });
    const none = policyToForm(policyOf(c));
    none.code_bundle_roles = { admin: false, member: false };
    expect(policyPatch(none, c).patch).toEqual({ launch_policy: { command_roles: ['admin'], entrypoints: [], code_bundle_roles: [] } });
  });
  it('sends nothing while an entrypoint line is bad', () => {
    const c = cluster();
    const { patch, errors } = policyPatch({ ...policyToForm(policyOf(c)), entrypoints: './train.sh' }, c);
    expect(patch).toEqual({});
    expect(errors).toHaveLength(1);
  });
  it('describes roles in words', () => {
    expect(rolesText(['admin', 'member'])).toBe('admin, member');
    expect(rolesText([])).toBe('nobody');
  });
});

describe('who may manage clusters', () => {
  it('is admins only, as the server decides', () => {
    expect(canManageClusters({ kind: 'user', id: 'usr_a', username: 'a', role: 'admin' })).toBe(true);
    expect(canManageClusters({ kind: 'user', id: 'usr_m', username: 'm', role: 'member' })).toBe(false);
    expect(canManageClusters({ kind: 'user', id: 'usr_v', username: 'v', role: 'viewer' })).toBe(false);
    expect(canManageClusters(null)).toBe(false);
  });
});
