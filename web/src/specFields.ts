// The text forms of the run spec's structured fields, as the new-run form shows and reads them.
// Every pair is exact: parseX(formatX(value)) gives back value, so a spec pasted into the form
// comes out of it unchanged.
import type { FieldError } from './spec';

/** "ici_fsdp=16, ici_tensor=4" or one per line → {ici_fsdp:16, ici_tensor:4}. */
export function parseParallelism(text: string, errors: FieldError[] = []): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(/[,\n]/)) {
    const p = part.trim();
    if (!p) continue;
    const m = /^([a-z_]+)\s*[=:]\s*(-?\d+)$/.exec(p);
    if (!m) { errors.push({ field: 'parallelism', message: `"${p}" is not axis=integer` }); continue; }
    out[m[1]] = Number(m[2]);
  }
  return out;
}

export function formatParallelism(p: Record<string, unknown> | undefined): string {
  return Object.entries(p ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
}

const NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * One config value as written after "key:": true/false, a number, a JSON string, list or
 * object, a 'single-quoted' string, or else the text itself.
 */
function configValue(text: string): unknown {
  const t = text.trim();
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  if (NUMBER.test(t)) return Number(t);
  if (t.startsWith('"') || t.startsWith('[') || t.startsWith('{')) {
    try { return JSON.parse(t); } catch { /* not JSON: the text itself */ }
  }
  if (t.length >= 2 && t.startsWith("'") && t.endsWith("'")) return t.slice(1, -1);
  return t;
}

/** Config overrides, one "key: value" (or key=value) per line; # starts a comment line. */
export function parseConfig(text: string, errors: FieldError[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_.]*)\s*[:=]\s*(.*)$/.exec(line);
    if (!m) { errors.push({ field: 'config', message: `"${line}" is not key: value` }); continue; }
    out[m[1]] = configValue(m[2]);
  }
  return out;
}

/** A string is written bare when it reads back as itself, else as a JSON string. */
function formatConfigValue(v: unknown): string {
  if (typeof v === 'string') return configValue(v) === v && v.trim() === v && !v.includes('\n') ? v : JSON.stringify(v);
  return JSON.stringify(v);
}

export function formatConfig(c: Record<string, unknown> | undefined): string {
  return Object.entries(c ?? {}).map(([k, v]) => `${k}: ${formatConfigValue(v)}`).join('\n');
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Environment variables, one NAME=value per line (a .env file's form). The value is everything
 * after the first "=", spaces included: XLA_FLAGS values are themselves "--flag=value" lists.
 */
export function parseEnv(text: string, errors: FieldError[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (!line.trim() || line.trim().startsWith('#')) continue;
    const eq = line.indexOf('=');
    const name = (eq < 0 ? line : line.slice(0, eq)).trim();
    if (eq < 0 || !ENV_NAME.test(name)) {
      errors.push({ field: 'env', message: `"${line.trim()}" is not NAME=value` });
      continue;
    }
    if (name in out) { errors.push({ field: 'env', message: `${name} is given twice` }); continue; }
    out[name] = line.slice(eq + 1);
  }
  return out;
}

/** Integer and boolean values are written as text, as the server stores them. */
export function formatEnv(env: Record<string, unknown> | undefined): string {
  return Object.entries(env ?? {}).map(([k, v]) => `${k}=${String(v)}`).join('\n');
}

/**
 * A field that is a string or an argv (command, entrypoint): a JSON array of strings is the
 * argv, anything else the string itself. "" is not given.
 */
export function parseArgvOrText(text: string, field: string, errors: FieldError[] = []): string | string[] | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (t.startsWith('[')) {
    let argv: unknown;
    try { argv = JSON.parse(t); } catch {
      errors.push({ field, message: 'starts with "[" but is not a JSON list of strings, e.g. ["/bin/sh", "-c", "..."]' });
      return undefined;
    }
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
      errors.push({ field, message: 'an argv is a non-empty JSON list of strings' });
      return undefined;
    }
    return argv as string[];
  }
  return t;
}

export function formatArgvOrText(v: unknown): string {
  if (Array.isArray(v)) return JSON.stringify(v);
  return v === undefined || v === null ? '' : String(v);
}

/** Exit codes that restart a run: "1, 137" → [1, 137], each 0-255. */
export function parseExitCodes(text: string, errors: FieldError[] = []): number[] {
  const out: number[] = [];
  for (const part of text.split(/[,\s]+/)) {
    if (!part) continue;
    const n = Number(part);
    if (!/^\d+$/.test(part) || n > 255) {
      errors.push({ field: 'restart_on_exit_codes', message: `"${part}" is not an exit code (0-255)` });
      continue;
    }
    out.push(n);
  }
  return out;
}

export function formatExitCodes(codes: unknown): string {
  return Array.isArray(codes) ? codes.join(', ') : '';
}
