// The register-dataset form on /datasets: its POST body, and who may register and delete. The
// server judges the values (empty names and URIs, negative counts, unreadable local paths) and
// its problem+json is shown by field; this refuses only text that is not a number.
import { parseCount, parseNumber } from './fields';
import type { FieldError } from './spec';
import type { Dataset, DatasetCreate, DatasetFormat, Me } from './types';

export const DATASET_FORMATS: DatasetFormat[] = ['jsonl', 'text', 'arrayrecord', 'tfrecord', 'synthetic'];

export interface DatasetForm {
  name: string; uri: string; format: DatasetFormat;
  records: string; bytes: string; tokens: string; tokens_per_record: string;
}

export const EMPTY_DATASET_FORM: DatasetForm = {
  name: '', uri: '', format: 'jsonl', records: '', bytes: '', tokens: '', tokens_per_record: '',
};

/** Registering is for admins and members (x-podium-access: writer); viewers only read. */
export function canRegisterDatasets(me: Me | null | undefined): boolean {
  return me?.role === 'admin' || me?.role === 'member';
}

/** Its creator (while a member or admin) or any admin; the server says 403 to anyone else. */
export function canDeleteDataset(me: Me | null | undefined, d: Dataset): boolean {
  if (me?.role === 'admin') return true;
  return me?.role === 'member' && !!me.id && d.created_by === me.id;
}

/** The server's rule (dataset_scan.cpp): a file:// URI or an absolute path is a file it reads. */
export function isLocalUri(uri: string): boolean {
  const u = uri.trim();
  return u.startsWith('file://') || u.startsWith('/');
}

/** What the form says under the URI, or null. */
export function uriNote(form: DatasetForm, me: Me | null | undefined): string | null {
  if (!isLocalUri(form.uri) || form.format === 'synthetic') return null;
  if (me?.role !== 'admin') return 'A local path makes the server read the file: only admins may register one. Give a remote URI (gs://…) with the figures you know.';
  return 'The server reads this file itself: its bytes, and for jsonl, text and tfrecord its records, replace what you type.';
}

/** The POST /datasets body: trimmed name and URI, the format, and each figure that was given. */
export function newDatasetBody(form: DatasetForm): { body: DatasetCreate; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const body: DatasetCreate = { name: form.name.trim(), uri: form.uri.trim(), format: form.format };
  for (const k of ['records', 'bytes', 'tokens'] as const) {
    const n = parseCount(form[k], k, errors);
    if (n !== undefined) body[k] = n;
  }
  const tpr = parseNumber(form.tokens_per_record, 'tokens_per_record', errors);
  if (tpr !== undefined) body.tokens_per_record = tpr;
  return { body, errors };
}
