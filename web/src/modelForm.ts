// The add-model form on /models: a MaxText model config pasted or read from a file, as the
// POST /models body, and who may add and delete models. The server reads the config (its
// problem+json names `yaml`, `config` or `name`); this only decides which of the two forms the
// text is and refuses an empty name or text.
import type { FieldError } from './spec';
import type { Me, Model, ModelCreate } from './types';

export interface ModelForm { name: string; description: string; text: string }

export const EMPTY_MODEL_FORM: ModelForm = { name: '', description: '', text: '' };

/** Adding is for admins and members (x-podium-access: writer); viewers only read. */
export function canAddModels(me: Me | null | undefined): boolean {
  return me?.role === 'admin' || me?.role === 'member';
}

/** Never a built-in; otherwise its creator (member or admin) or any admin, as the server rules. */
export function canDeleteModel(me: Me | null | undefined, m: Model): boolean {
  if (m.builtin) return false;
  if (me?.role === 'admin') return true;
  return me?.role === 'member' && !!me.id && m.created_by === me.id;
}

/** A file's name without directory and extension: the model's name when none was typed. */
export function nameFromFile(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  return base.replace(/\.(ya?ml|json)$/i, '');
}

/**
 * The POST /models body. A text that is a JSON object is sent as `config` (the same keys as
 * JSON); anything else as `yaml`, which the server keeps as written.
 */
export function newModelBody(form: ModelForm): { body: ModelCreate; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const body: ModelCreate = { name: form.name.trim() };
  if (!body.name) errors.push({ field: 'name', message: 'required' });
  if (form.description.trim()) body.description = form.description.trim();
  const text = form.text;
  if (!text.trim()) {
    errors.push({ field: 'yaml', message: 'paste the MaxText model config, or choose its file' });
    return { body, errors };
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        body.config = parsed as Record<string, unknown>;
        return { body, errors };
      }
    } catch { /* YAML flow mappings also start with "{": let the server read it as YAML */ }
  }
  body.yaml = text;
  return { body, errors };
}

/** "18.9 B", "853.1 K": parameter counts as the catalog table shows them. */
export function paramCount(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const units: [number, string][] = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
  for (const [scale, unit] of units) if (Math.abs(v) >= scale) return `${(v / scale).toFixed(v / scale >= 100 ? 0 : v / scale >= 10 ? 1 : 2)} ${unit}`;
  return String(Math.round(v));
}
