import { describe, expect, it } from 'vitest';
import {
  canDeleteDataset, canRegisterDatasets, EMPTY_DATASET_FORM, isLocalUri, newDatasetBody, uriNote,
} from '../../src/datasetForm';
import type { Dataset, Me } from '../../src/types';

const admin: Me = { kind: 'user', id: 'usr_a', username: 'admin', role: 'admin' };
const member: Me = { kind: 'user', id: 'usr_m', username: 'mia', role: 'member' };
const viewer: Me = { kind: 'user', id: 'usr_v', username: 'vic', role: 'viewer' };
const dataset = (over: Partial<Dataset> = {}): Dataset => ({
  id: 'ds_1', name: 'c4', uri: 'gs://b/c4/', format: 'arrayrecord', records: null, bytes: null, tokens: null, tokens_per_record: null,
  created_at: '2026-01-01T00:00:00Z', created_by: 'usr_a', ...over,
});

describe('who registers and deletes', () => {
  it('registers: admins and members, as x-podium-access: writer', () => {
    expect(canRegisterDatasets(admin)).toBe(true);
    expect(canRegisterDatasets(member)).toBe(true);
    expect(canRegisterDatasets(viewer)).toBe(false);
    expect(canRegisterDatasets(null)).toBe(false);
  });
  it("deletes: an admin any, a member their own, a viewer none", () => {
    expect(canDeleteDataset(admin, dataset({ created_by: 'usr_other' }))).toBe(true);
    expect(canDeleteDataset(member, dataset({ created_by: 'usr_m' }))).toBe(true);
    expect(canDeleteDataset(member, dataset({ created_by: 'usr_a' }))).toBe(false);
    expect(canDeleteDataset(member, dataset({ created_by: null }))).toBe(false);
    expect(canDeleteDataset(viewer, dataset({ created_by: 'usr_v' }))).toBe(false);
  });
});

describe('new dataset body', () => {
  it('sends the trimmed name and URI, the format, and only the figures given', () => {
    const { body, errors } = newDatasetBody({ ...EMPTY_DATASET_FORM, name: ' c4 ', uri: ' gs://bucket/c4/en/ ', format: 'arrayrecord', records: '1,000', tokens: '2_000_000' });
    expect(body).toEqual({ name: 'c4', uri: 'gs://bucket/c4/en/', format: 'arrayrecord', records: 1000, tokens: 2000000 });
    expect(errors).toEqual([]);
  });
  it('sends tokens per record as a number', () => {
    expect(newDatasetBody({ ...EMPTY_DATASET_FORM, name: 'x', uri: 'gs://b/x', tokens_per_record: '512.5', bytes: '0' }).body)
      .toEqual({ name: 'x', uri: 'gs://b/x', format: 'jsonl', bytes: 0, tokens_per_record: 512.5 });
  });
  it('names each field that is not a number', () => {
    const { errors } = newDatasetBody({ ...EMPTY_DATASET_FORM, records: 'many', bytes: '1.5', tokens: '1,00', tokens_per_record: 'x' });
    expect(errors.map((e) => e.field)).toEqual(['records', 'bytes', 'tokens', 'tokens_per_record']);
  });
  it('leaves empty names and URIs and negative counts to the server', () => {
    const { body, errors } = newDatasetBody({ ...EMPTY_DATASET_FORM, records: '-1' });
    expect(errors).toEqual([]);
    expect(body).toEqual({ name: '', uri: '', format: 'jsonl', records: -1 });
  });
});

describe('local paths', () => {
  it('follows the server: file:// or an absolute path', () => {
    expect(isLocalUri('file:///data/x.jsonl')).toBe(true);
    expect(isLocalUri(' /data/x.jsonl')).toBe(true);
    expect(isLocalUri('gs://b/x')).toBe(false);
    expect(isLocalUri('data/x.jsonl')).toBe(false);
  });
  it('tells admins the server reads the file and members that they may not', () => {
    const form = { ...EMPTY_DATASET_FORM, uri: '/data/x.jsonl' };
    expect(uriNote(form, admin)).toContain('reads this file');
    expect(uriNote(form, member)).toContain('only admins');
    expect(uriNote({ ...form, format: 'synthetic' }, member)).toBeNull();
    expect(uriNote({ ...form, uri: 'gs://b/x' }, admin)).toBeNull();
  });
});
