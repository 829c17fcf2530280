// What the dashboard's forms share: a text field read as a JSON number, and the server's own
// field errors (problem+json `errors[]`) to show beside the fields they name.
import { ApiError } from './api';
import type { FieldError } from './spec';

/** "" → undefined (not given); otherwise a whole number or an error naming the field. */
export function parseInteger(text: string, field: string, errors: FieldError[]): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  if (!/^[+-]?\d+$/.test(t) || !Number.isSafeInteger(n)) { errors.push({ field, message: `"${t}" is not a whole number` }); return undefined; }
  return n;
}

/** A count as people write it: "1,000,000", "1_000_000" or "1 000 000" are 1000000. */
export function parseCount(text: string, field: string, errors: FieldError[]): number | undefined {
  const t = text.trim();
  if (/^\d{1,3}([,_ ]\d{3})+$/.test(t)) return parseInteger(t.replace(/[,_ ]/g, ''), field, errors);
  return parseInteger(t, field, errors);
}

/** "" → undefined; otherwise a finite number or an error naming the field. */
export function parseNumber(text: string, field: string, errors: FieldError[]): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  if (!Number.isFinite(n)) { errors.push({ field, message: `"${t}" is not a number` }); return undefined; }
  return n;
}

/** The server's field errors of a problem+json answer; [] for any other error. */
export function serverFieldErrors(error: unknown): FieldError[] {
  if (!(error instanceof ApiError)) return [];
  return (error.problem.errors ?? []).filter((e) => e && typeof e.field === 'string' && typeof e.message === 'string');
}
