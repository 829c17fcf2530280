// The cluster forms: a new cluster's POST body, and an existing cluster's settings and launch
// policy as the PATCH that carries only what the user changed. The server judges the values
// (ranges, accelerator names, GCP names) and its problem+json is shown as it comes; these
// functions refuse only text that has no JSON form: a number that is not one, a label line
// without "=", an entrypoint that is neither a module nor an absolute path.
import { parseInteger } from './fields';
import type { FieldError } from './spec';
import type {
  Capacity, Cluster, ClusterCreate, ClusterPatch, LaunchPolicy, Me, PolicyRole,
} from './types';

export const CAPACITIES: Capacity[] = ['spot', 'on-demand', 'reservation', 'flex'];
export const POLICY_ROLES: PolicyRole[] = ['admin', 'member'];
/** The policy a cluster has when none was set (docs/openapi.yaml, LaunchPolicy). */
export const DEFAULT_POLICY: LaunchPolicy = { command_roles: ['admin'], entrypoints: [], code_bundle_roles: ['admin', 'member'] };

/** Creating, changing and deleting clusters is for admins (x-podium-access: admin). */
export function canManageClusters(me: Me | null | undefined): boolean {
  return me?.role === 'admin';
}

/** "key=value" lines → {key: value}. Blank lines and "#" comments are skipped; a value may hold "=". */
export function parseLabels(text: string, errors: FieldError[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const lineOf: Record<string, number> = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const eq = line.indexOf('=');
    const at = `line ${i + 1}`;
    if (eq < 0) { errors.push({ field: 'labels', message: `${at}: "${line}" is not key=value` }); return; }
    const key = line.slice(0, eq).trim();
    if (!key) { errors.push({ field: 'labels', message: `${at}: "${line}" has no key before "="` }); return; }
    if (key in lineOf) { errors.push({ field: 'labels', message: `${at}: "${key}" is already set on line ${lineOf[key]}` }); return; }
    lineOf[key] = i + 1;
    out[key] = line.slice(eq + 1).trim();
  });
  return out;
}

export function formatLabels(labels: Record<string, string> | undefined): string {
  return Object.entries(labels ?? {}).map(([k, v]) => `${k}=${v}`).join('\n');
}

function isModuleName(s: string): boolean {
  return s.length <= 200 && s.split('.').every((part) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(part));
}

function isExecutablePath(s: string): boolean {
  if (s.length < 2 || s.length > 4096 || !s.startsWith('/') || s.endsWith('/')) return false;
  if (/[\x00-\x20\x7f]/.test(s)) return false;
  return s.slice(1).split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/** One entrypoint a line: a Python module (MaxText.train) or an absolute path; repeats dropped. */
export function parseEntrypoints(text: string, errors: FieldError[] = []): string[] {
  const out: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const e = raw.trim();
    if (!e) return;
    if (!isModuleName(e) && !isExecutablePath(e)) {
      errors.push({ field: 'entrypoints', message: `line ${i + 1}: "${e}" is neither a Python module name (MaxText.train) nor an absolute executable path` });
      return;
    }
    if (!out.includes(e)) out.push(e);
  });
  return out;
}

/** "" → null (no price); otherwise a number or an error. */
function parsePrice(text: string, errors: FieldError[]): number | null | undefined {
  const t = text.trim();
  if (t === '') return null;
  const n = Number(t.replace(/^\$/, ''));
  if (!Number.isFinite(n)) { errors.push({ field: 'price_per_chip_hour', message: `"${t}" is not a number` }); return undefined; }
  return n;
}

// ---- new cluster ----

export interface NewClusterForm {
  name: string; accelerator: string; num_slices: string; capacity: Capacity; zone: string;
  project: string; reservation: string; network: string; price_per_chip_hour: string;
  /** "key=value" lines */
  labels: string;
}

export const EMPTY_CLUSTER_FORM: NewClusterForm = {
  name: '', accelerator: '', num_slices: '1', capacity: 'on-demand', zone: '', project: '',
  reservation: '', network: '', price_per_chip_hour: '', labels: '',
};

/** The POST /clusters body; empty optional fields are left out (the server's defaults). */
export function newClusterBody(form: NewClusterForm): { body: ClusterCreate; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const body: ClusterCreate = { name: form.name.trim(), accelerator: form.accelerator.trim(), capacity: form.capacity };
  const slices = parseInteger(form.num_slices, 'num_slices', errors);
  if (slices !== undefined) body.num_slices = slices;
  for (const k of ['zone', 'project', 'reservation', 'network'] as const) {
    if (form[k].trim()) body[k] = form[k].trim();
  }
  const price = parsePrice(form.price_per_chip_hour, errors);
  if (price !== null && price !== undefined) body.price_per_chip_hour = price;
  body.labels = parseLabels(form.labels, errors);
  return { body, errors };
}

// ---- an existing cluster's settings ----

export interface SettingsForm {
  num_slices: string; capacity: string; zone: string; project: string; reservation: string;
  network: string;
  /** "" clears the price */
  price_per_chip_hour: string;
  labels: string;
}

export function settingsToForm(c: Cluster): SettingsForm {
  return {
    num_slices: String(c.num_slices), capacity: c.capacity, zone: c.zone ?? '', project: c.project ?? '',
    reservation: c.reservation ?? '', network: c.network ?? '',
    price_per_chip_hour: c.price_per_chip_hour === null ? '' : String(c.price_per_chip_hour),
    labels: formatLabels(c.labels),
  };
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && b[k] === a[k]);
}

/** The PATCH body for what differs between the form and the cluster it was filled from. */
export function settingsPatch(form: SettingsForm, c: Cluster): { patch: ClusterPatch; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const patch: ClusterPatch = {};
  const slices = parseInteger(form.num_slices, 'num_slices', errors);
  if (slices === undefined && form.num_slices.trim() === '') errors.push({ field: 'num_slices', message: 'is required' });
  if (slices !== undefined && slices !== c.num_slices) patch.num_slices = slices;
  if (form.capacity !== c.capacity) patch.capacity = form.capacity as Capacity;
  for (const k of ['zone', 'project', 'reservation', 'network'] as const) {
    const v = form[k].trim();
    if (v !== (c[k] ?? '')) patch[k] = v;
  }
  const price = parsePrice(form.price_per_chip_hour, errors);
  if (price !== undefined && price !== c.price_per_chip_hour) patch.price_per_chip_hour = price;
  const labels = parseLabels(form.labels, errors);
  if (!sameLabels(labels, c.labels ?? {})) patch.labels = labels;
  return { patch, errors };
}

// ---- launch policy ----

export interface PolicyForm {
  command_roles: Record<PolicyRole, boolean>;
  code_bundle_roles: Record<PolicyRole, boolean>;
  /** one entrypoint a line */
  entrypoints: string;
}

const roleSet = (roles: readonly string[]) =>
  Object.fromEntries(POLICY_ROLES.map((r) => [r, roles.includes(r)])) as Record<PolicyRole, boolean>;
const roleList = (set: Record<PolicyRole, boolean>) => POLICY_ROLES.filter((r) => set[r]);

/** The policy in force; a server that does not report one has the default. */
export function policyOf(c: Cluster): LaunchPolicy {
  const p = c.launch_policy;
  return {
    command_roles: p?.command_roles ?? DEFAULT_POLICY.command_roles,
    entrypoints: p?.entrypoints ?? DEFAULT_POLICY.entrypoints,
    code_bundle_roles: p?.code_bundle_roles ?? DEFAULT_POLICY.code_bundle_roles,
  };
}

export function policyToForm(p: LaunchPolicy): PolicyForm {
  return { command_roles: roleSet(p.command_roles), code_bundle_roles: roleSet(p.code_bundle_roles), entrypoints: p.entrypoints.join('\n') };
}

export function formToPolicy(form: PolicyForm, errors: FieldError[] = []): LaunchPolicy {
  return {
    command_roles: roleList(form.command_roles),
    entrypoints: parseEntrypoints(form.entrypoints, errors),
    code_bundle_roles: roleList(form.code_bundle_roles),
  };
}

function samePolicy(a: LaunchPolicy, b: LaunchPolicy): boolean {
  const sameRoles = (x: PolicyRole[], y: PolicyRole[]) => POLICY_ROLES.every((r) => x.includes(r) === y.includes(r));
  return sameRoles(a.command_roles, b.command_roles) && sameRoles(a.code_bundle_roles, b.code_bundle_roles)
    && a.entrypoints.length === b.entrypoints.length && a.entrypoints.every((e, i) => e === b.entrypoints[i]);
}

/** `{launch_policy}` with the whole policy (it replaces the old one) when it changed, else `{}`. */
export function policyPatch(form: PolicyForm, c: Cluster): { patch: ClusterPatch; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const next = formToPolicy(form, errors);
  if (errors.length || samePolicy(next, policyOf(c))) return { patch: {}, errors };
  return { patch: { launch_policy: next }, errors };
}

/** "admin, member", or "nobody". */
export function rolesText(roles: readonly string[]): string {
  return roles.length ? roles.join(', ') : 'nobody';
}

export function isEmptyPatch(p: ClusterPatch): boolean {
  return Object.keys(p).length === 0;
}
