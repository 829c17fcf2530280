// Shapes of the Podium REST API (docs/openapi.yaml) that the dashboard reads.

export type RunState =
  | 'queued' | 'starting' | 'running' | 'recovering' | 'cancelling'
  | 'succeeded' | 'failed' | 'cancelled';

export const RUN_STATES: RunState[] = [
  'queued', 'starting', 'running', 'recovering', 'cancelling', 'succeeded', 'failed', 'cancelled',
];
export const FINISHED_STATES: RunState[] = ['succeeded', 'failed', 'cancelled'];

export interface Page<T> { items: T[]; next_cursor: string | null }

export interface Problem {
  type?: string; title?: string; status: number; detail?: string;
  errors?: { field: string; message: string }[];
}

export interface Me { kind: 'user' | 'worker'; id?: string; username?: string; role?: string }

export interface PlanIssue { code: string; message: string; hint?: string; field?: string }
export interface Alternative {
  kind: 'mesh' | 'memory' | 'data' | string;
  description: string;
  set?: Record<string, unknown>;
  per_device_gib?: number;
  ici?: Record<string, number>;
  dcn?: Record<string, number>;
}
export interface Topology {
  type: string; family: string; topology: string; chips: number; devices: number; hosts: number;
  slices: number; total_chips: number; total_devices: number; total_hosts: number;
  physical_mesh: number[]; hbm_gib_per_device: number; peak_tflops_per_device: number;
}
export interface Plan {
  ok: boolean;
  errors: PlanIssue[];
  warnings: PlanIssue[];
  topology: Topology | null;
  mesh: { ici: number[]; dcn: number[]; axes: string[]; assignment: unknown[] } | null;
  memory: {
    per_device_gib: number; capacity_gib: number; fits: boolean; basis?: string;
    source?: { kind: string; gib_per_device: number; tokens_per_device: number; oom: boolean; run: string } | null;
    verdict?: string; low_gib?: number; high_gib?: number; breakdown: Record<string, number>;
  } | null;
  data: { tokens_per_step: number; tokens_available: number | null; exhausted_at_step: number | null } | null;
  estimate: {
    tflops_per_device_per_step: number; step_seconds: number;
    tokens_per_second_per_device: number; mfu: number;
  } | null;
  alternatives: Alternative[];
}

export interface Run {
  id: string; name: string; owner: string | null; cluster: string | null; accelerator: string | null;
  num_slices: number | null; current_slices: number | null; waiting_reason: string | null;
  imported: boolean; dataset: string | null; model: string; workload: string;
  spec: Record<string, any>; plan?: Plan; state: RunState; failure_class: string | null;
  /** Why a failed run failed, one line (a code_error's exception line); null otherwise. */
  failure_detail?: string | null;
  restarts: number; recoveries: number; last_step: number | null; resumed_from_step: number | null;
  priority: string; tags: string[]; created_at: string; started_at: string | null;
  finished_at: string | null;
}

export interface Summary {
  run_id: string; name: string; state: RunState; accelerator: string | null; topology: string;
  chips: number | null; devices: number | null; hosts: number | null; num_slices: number | null;
  step_seconds: number | null; tflops_per_device: number | null;
  tokens_per_second_per_device: number | null; mfu: number | null; hbm_gib_used: number | null;
  goodput: number | null; badput?: Record<string, number>; cost_per_billion_tokens: number | null;
  steady_state?: { band?: [number, number]; kept_ranges?: [number, number][];
    excluded?: { reason: string; step: number; seconds: number }[] } | null;
  steps?: number; last_step?: number | null; restarts?: number; recoveries?: number;
  hbm?: Record<string, unknown> | null;
}

export interface Metrics { steps: number[]; series: Record<string, (number | null)[]> }

export interface AttemptHost {
  rank: number; slice: number; host: number; worker_id: string | null; hostname: string | null;
  state: string; exit_code: number | null; signal: number | null; started_at: string | null;
  ended_at: string | null;
}
export interface Attempt {
  id: string; number: number; state: string; reason: string; created_at: string;
  started_at: string | null; ended_at: string | null; ending_cause: string | null;
  failure_class: string | null; world_size: number; num_slices: number; slices: number[];
  first_step: number | null; last_step: number | null; resumed_from_step: number | null;
  exit_codes: number[]; hosts: AttemptHost[]; restart_decision: unknown;
  executor?: 'agent' | 'slurm' | 'kubernetes';
  engine?: { job_id: string | null; state: string | null; end: { reason?: string } | null } | null;
}
export interface RunEvent { at: string; from_state: string | null; to_state: string; cause: string }
export interface Checkpoint { id: string; step: number; uri: string; bytes: number | null; attempt_number?: number; created_at: string }
export interface LogLine { attempt: number; rank: number; seq: number; ts: string; line: string }

export interface Accelerator {
  type: string; family: string; topology: string; chips_per_slice: number;
  devices_per_slice: number; hosts_per_slice: number; physical_mesh: number[];
  peak_tflops_per_device: number; hbm_gib_per_device: number;
}
export type Capacity = 'spot' | 'on-demand' | 'reservation' | 'flex';
export type PolicyRole = 'admin' | 'member';
/** Who may decide what runs on a cluster's hosts; the server answers with every key filled in. */
export interface LaunchPolicy { command_roles: PolicyRole[]; entrypoints: string[]; code_bundle_roles: PolicyRole[] }
export interface Cluster {
  id: string; name: string; accelerator: Accelerator; num_slices: number; capacity: string;
  zone: string; price_per_chip_hour: number | null; labels: Record<string, string>;
  hosts: { expected: number; registered: number; healthy: number }; created_at: string;
  updated_at?: string; project?: string; reservation?: string; network?: string;
  executor?: { kind: 'agent' | 'slurm' | 'kubernetes'; [key: string]: unknown };
  launch_policy?: LaunchPolicy;
}
/** POST /clusters (the executor stays the default, Podium's agents). */
export interface ClusterCreate {
  name: string; accelerator: string; num_slices?: number; capacity?: Capacity; zone?: string;
  project?: string; reservation?: string; network?: string; price_per_chip_hour?: number | null;
  labels?: Record<string, string>;
}
/** PATCH /clusters/{name}: absent keys stay; null price clears it; labels and launch_policy replace. */
export interface ClusterPatch {
  num_slices?: number; capacity?: Capacity; zone?: string; project?: string; reservation?: string;
  network?: string; price_per_chip_hour?: number | null; labels?: Record<string, string>;
  launch_policy?: LaunchPolicy;
}
export interface Worker {
  id: string; slice: number; host: number; hostname: string; address: string; devices: number;
  version: string; healthy: boolean; last_heartbeat_at: string | null; registered_at: string;
  notice?: string | null; notice_at?: string | null;
  assignment?: { run_id: string; run_name?: string; rank: number } | null;
}
export interface ProvisioningOption {
  method: string; description: string; commands: string[]; teardown?: string[]; notes?: string[]; missing?: string[];
}
export type DatasetFormat = 'jsonl' | 'text' | 'arrayrecord' | 'tfrecord' | 'synthetic';
export interface Dataset {
  id: string; name: string; uri: string; format: string; records: number | null;
  bytes: number | null; tokens: number | null; created_at: string;
  tokens_per_record?: number | null;
  /** The creator's user id: they and admins may delete it. */
  created_by?: string | null;
}
/** POST /datasets; for a local path (file:// or /…) the server counts records and bytes itself. */
export interface DatasetCreate {
  name: string; uri: string; format: DatasetFormat; records?: number; bytes?: number; tokens?: number;
  tokens_per_record?: number;
}
export interface Model { name: string; architecture?: string; total_params?: number; active_params_per_token?: number }
export type Role = 'admin' | 'member' | 'viewer';
export interface User { id: string; username: string; role: Role; disabled: boolean; created_at: string }
/** POST /users: without a password the user has API tokens only (no dashboard sign-in). */
export interface UserCreate { username: string; role: Role; password?: string }
/** The created user and their first API token (named "initial"), shown once. */
export interface UserCreated extends User { token: string }
/** PATCH /users/{id}: absent keys stay. */
export interface UserPatch { role?: Role; disabled?: boolean; password?: string }
/** POST /clusters/{id}/worker-tokens: the secret is in this answer only. */
export interface WorkerTokenCreated { id: string; cluster_id: string; token: string }
/** A worker token as GET /clusters/{id}/worker-tokens lists it: never the secret. */
export interface WorkerToken { id: string; cluster_id: string; created_by: string | null; created_at: string; last_used_at: string | null; revoked_at: string | null }
export interface ApiToken { id: string; name: string; created_at: string; last_used_at: string | null; revoked_at: string | null; token?: string }

export interface CompareRow {
  run_id?: string; id?: string; name: string; accelerator: string | null; topology: string | null;
  chips: number | null; devices: number | null; hosts: number | null;
  per_device_batch_size: number | null; max_target_length: number | null;
  step_seconds: number | null; tflops_per_device: number | null;
  tokens_per_second_per_device: number | null; mfu: number | null; hbm_gib_used: number | null;
  goodput: number | null; cost_per_billion_tokens: number | null;
  ratios?: Record<string, number | null>;
}
export interface CompareResult { baseline: string; rows: CompareRow[] }
