// Shapes of the Podium REST API the dashboard reads, named for the dashboard's code. Every one is
// taken from src/api/openapi.ts, which `npm run api:types` generates from docs/openapi.yaml and
// `npm run check:api-types` keeps equal to it: a field the server does not send cannot be typed
// here.
import type { components, operations } from './api/openapi';

type Schemas = components['schemas'];
type JsonBody<Op extends keyof operations> =
  operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Responses<Op extends keyof operations> = operations[Op]['responses'];
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/**
 * The JSON body an operation answers a success with (its documented 2xx JSON responses): every
 * call of src/api.ts names its operationId, so a change to the contract reaches the code reading
 * the answer.
 */
export type Answer<Op extends keyof operations> = Json<Responses<Op>[Extract<keyof Responses<Op>, 200 | 201 | 202>]>;
/** The JSON body an operation takes. */
export type RequestBody<Op extends keyof operations> = JsonBody<Op>;

export type RunState = Schemas['RunState'];

export const RUN_STATES: RunState[] = [
  'queued', 'starting', 'running', 'recovering', 'cancelling', 'succeeded', 'failed', 'cancelled',
];
export const FINISHED_STATES: RunState[] = ['succeeded', 'failed', 'cancelled'];


/**
 * An error as the client sees it: the server's problem+json (Schemas['Problem']), or one the
 * client makes itself (status 0 when the server could not be reached), hence the optional members.
 */
export type Problem = Partial<Schemas['Problem']> & { status: number };

export type Me = Schemas['MeUser'];

export type Plan = Schemas['Plan'];
export type PlanIssue = Schemas['PlanIssue'];
export type ElasticShape = Schemas['ElasticShape'];
export type Alternative = Plan['alternatives'][number];
export type Topology = NonNullable<Plan['topology']>;

export type Run = Schemas['Run'];
export type Project = Schemas['Project'];
export type SavedCompare = Schemas['SavedCompare'];
export type Summary = Schemas['RunSummary'];
export type Metrics = Schemas['Metrics'];
export type Attempt = Schemas['Attempt'];
export type AttemptHost = Schemas['AttemptHost'];
export type AttemptEnvironment = Schemas['AttemptEnvironment'];
export type RunEvent = Schemas['RunEvent'];
export type Checkpoint = Schemas['Checkpoint'];
export type LogLine = Schemas['LogLine'];
/** The data of the log stream's `state` event (its `log` events carry a LogLine). */
export type LogStreamState = Schemas['LogStreamState'];

export type Accelerator = Schemas['Accelerator'];
export type Capacity = Schemas['Capacity'];
/** Who may decide what runs on a cluster's hosts; the server answers with every key filled in. */
export type LaunchPolicy = Required<Schemas['LaunchPolicy']>;
export type PolicyRole = LaunchPolicy['command_roles'][number];
export type Cluster = Schemas['Cluster'];
/** POST /clusters (the executor stays the default, Podium's agents). */
export type ClusterCreate = Schemas['ClusterCreate'];
/** PATCH /clusters/{name}: absent keys stay; null price clears it; labels and launch_policy replace. */
export type ClusterPatch = Schemas['ClusterPatch'];
export type Worker = Schemas['Worker'];
export type ProvisioningOption = Schemas['Provisioning']['options'][number];

export type DatasetFormat = Schemas['DatasetFormat'];
export type Dataset = Schemas['Dataset'];
/** POST /datasets; for a local path (file:// or /…) the server counts records and bytes itself. */
export type DatasetCreate = Schemas['DatasetCreate'];

export type Model = Schemas['Model'];
export type ModelCreate = Schemas['ModelCreate'];

export type Role = Schemas['Role'];
export type User = Schemas['User'];
/** POST /users: without a password the user has API tokens only (no dashboard sign-in). */
export type UserCreate = JsonBody<'createUser'>;
/** The created user and their first API token (named "initial"), shown once. */
export type UserCreated = Schemas['UserCreated'];
/** PATCH /users/{id}: absent keys stay. */
export type UserPatch = JsonBody<'updateUser'>;
/** POST /clusters/{id}/worker-tokens: the secret is in this answer only. */
export type WorkerTokenCreated = Schemas['WorkerTokenCreated'];
/** A worker token as GET /clusters/{id}/worker-tokens lists it: never the secret. */
export type WorkerToken = Schemas['WorkerToken'];
/** An API token as GET /tokens lists it: never the secret. */
export type ApiToken = Schemas['Token'];
export type ApiTokenCreated = Schemas['TokenCreated'];

export type CompareRow = Schemas['CompareRow'];
export type CompareResult = Schemas['Compare'];
