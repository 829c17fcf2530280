import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api';
import { parseCount, parseInteger, parseNumber, serverFieldErrors } from '../../src/fields';
import type { FieldError } from '../../src/spec';

describe('number fields', () => {
  it('reads whole numbers, leaves empty fields out, names the field of a bad one', () => {
    const errors: FieldError[] = [];
    expect(parseInteger(' 42 ', 'n', errors)).toBe(42);
    expect(parseInteger('-3', 'n', errors)).toBe(-3);
    expect(parseInteger('', 'n', errors)).toBeUndefined();
    expect(errors).toEqual([]);
    for (const bad of ['4.5', '1e3', 'x', '9007199254740993', '0x10']) {
      const e: FieldError[] = [];
      expect(parseInteger(bad, 'records', e)).toBeUndefined();
      expect(e).toEqual([{ field: 'records', message: `"${bad}" is not a whole number` }]);
    }
  });
  it('reads counts with thousands separators, only where they group by three', () => {
    const errors: FieldError[] = [];
    expect(parseCount('1,000,000', 'tokens', errors)).toBe(1000000);
    expect(parseCount('2_500', 'tokens', errors)).toBe(2500);
    expect(parseCount('12 345 678', 'tokens', errors)).toBe(12345678);
    expect(parseCount('999', 'tokens', errors)).toBe(999);
    expect(errors).toEqual([]);
    for (const bad of ['1,00', '1,000,00', ',100', '1.000']) {
      const e: FieldError[] = [];
      expect(parseCount(bad, 'tokens', e)).toBeUndefined();
      expect(e.map((x) => x.field)).toEqual(['tokens']);
    }
  });
  it('reads decimals and refuses what is not a finite number', () => {
    const errors: FieldError[] = [];
    expect(parseNumber('512.5', 'tokens_per_record', errors)).toBe(512.5);
    expect(parseNumber('', 'tokens_per_record', errors)).toBeUndefined();
    expect(errors).toEqual([]);
    for (const bad of ['abc', 'Infinity', '1/2']) {
      const e: FieldError[] = [];
      expect(parseNumber(bad, 'tokens_per_record', e)).toBeUndefined();
      expect(e).toEqual([{ field: 'tokens_per_record', message: `"${bad}" is not a number` }]);
    }
  });
});

describe('server field errors', () => {
  it("takes a problem's errors[] and nothing from other errors", () => {
    const problem = new ApiError({ status: 400, title: 'Bad Request', detail: 'invalid body', errors: [{ field: 'uri', message: 'must not be empty' }] });
    expect(serverFieldErrors(problem)).toEqual([{ field: 'uri', message: 'must not be empty' }]);
    expect(serverFieldErrors(new ApiError({ status: 409, detail: 'exists' }))).toEqual([]);
    expect(serverFieldErrors(new Error('x'))).toEqual([]);
    expect(serverFieldErrors(null)).toEqual([]);
  });
  it('drops malformed entries', () => {
    const odd = new ApiError({ status: 400, errors: [{ field: 'name', message: 'bad' }, { field: 3, message: 'x' } as never, null as never] });
    expect(serverFieldErrors(odd)).toEqual([{ field: 'name', message: 'bad' }]);
  });
});
