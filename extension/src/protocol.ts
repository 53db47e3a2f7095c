/**
 * The JSON-RPC surface of the Turnback server, as the extension sees it.
 *
 * Method names mirror `server/turnback/server/rpc/methods.py` (a unit test checks
 * both lists agree). Types follow the shapes in docs/PROTOCOL.md and
 * `server/turnback/models.py`; fields the server may add later are allowed, and
 * fields a server might leave out are optional so that rendering never trusts
 * more than the contract promises.
 */

/** Request method names, keyed like the Python constants (STATUS → status). */
export const Methods = {
  status: 'turnback/status',
  sessions: 'turnback/sessions',
  session: 'turnback/session',
  checkpoints: 'turnback/checkpoints',
  createCheckpoint: 'turnback/createCheckpoint',
  changes: 'turnback/changes',
  fileContent: 'turnback/fileContent',
  rewind: 'turnback/rewind',
  undo: 'turnback/undo',
  fork: 'turnback/fork',
  import: 'turnback/import',
  gc: 'turnback/gc',
  hooks: 'turnback/hooks',
  turns: 'turnback/turns',
  turnSteps: 'turnback/turnSteps',
  fileHistory: 'turnback/fileHistory',
  importCandidates: 'turnback/importCandidates',
  continue: 'turnback/continue',
  pushHistory: 'turnback/pushHistory',
  pullHistory: 'turnback/pullHistory',
  blame: 'turnback/blame',
} as const;

/** Notification method names. */
export const Notifications = {
  didChange: 'turnback/didChange',
} as const;

export const REQUESTS: readonly string[] = Object.values(Methods);
export const NOTIFICATIONS: readonly string[] = Object.values(Notifications);

/**
 * Fields of answers named in methods.py too: a checkpoint's `safetyOf`, and the operations
 * it names (a unit test checks both sides agree).
 */
export const Fields = {
  safetyOf: 'safetyOf',
  safetyWords: 'words',
} as const;

export const SafetyOps = {
  safetyRewind: 'rewind',
  safetyUndo: 'undo',
} as const;

export type SafetyOp = (typeof SafetyOps)[keyof typeof SafetyOps];

/** JSON-RPC error codes the server answers with (server/turnback/errors.py). */
export const ErrorCodes = {
  invalidParams: -32602,
  notFound: -32001,
  conflict: -32002,
  storeDamaged: -32003,
  unsafe: -32004,
} as const;

/** Every request may name the workspace folder (its URI); with one folder it may be left out. */
export interface FolderParams {
  folder?: string;
}

export interface StatusResult {
  folder: string;
  store: string;
  formatVersion: number;
  /** False while the folder has no store yet (older servers leave it out). */
  exists?: boolean;
  sessions: number;
  checkpoints: number;
  bytes: number;
  /** What is followed live; `summary` is the server's wording for the status bar. */
  following?: Following;
  /** Set while the kernel's inotify limit keeps folders unwatched (checkpoints walk them). */
  watchLimit?: WatchLimit | null;
  /** What the store found and set aside (a refused object log, a repaired index); empty when nothing. */
  setAside?: SetAside[];
}

/** One thing the store set aside; `message` is the sentence to show, ending in what to do. */
export interface SetAside {
  kind: 'log' | 'index';
  key: string;
  message: string;
}

export interface Following {
  state: 'starting' | 'importing' | 'following' | 'cancelled' | 'off';
  agents: { agent: string; label: string; files: number }[];
  summary: string;
}

/** The kernel's watch limit as the server met it; `message` is what to show. */
export interface WatchLimit {
  kind: 'watches' | 'instances';
  watched: number;
  missing: number;
  allowed: number | null;
  raiseTo: number | null;
  message: string;
}

export interface TokenStats {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

/** Per-session counters, named as in SPEC "Session stats". */
export interface SessionStats {
  prompts: number;
  responses: number;
  toolCalls: number;
  toolCallsFailed: number;
  toolResults: number;
  iterations: number;
  iterationsFailed: number;
  eventsPublished: number;
  checkpoints: number;
  rewinds: number;
  tokens: TokenStats;
  durationMs: number | null;
  startedAt: string | null;
  endedAt: string | null;
  completion: string | null;
  termination: string | null;
  merge: string | null;
  /** Distinct paths the agent's tool calls changed (absent from servers before it). */
  filesEdited?: number;
}

export interface SessionInfo {
  id: string;
  title: string;
  agent: string;
  model?: string | null;
  cwd?: string | null;
  source?: string;
  /** Pulled from another machine (turnback/pullHistory): read-only. */
  origin?: { machine: string; user?: string; host?: string };
  startedAt: string | null;
  endedAt: string | null;
  /** null while `counted` is false. */
  events?: number | null;
  head?: string | null;
  stats?: Partial<SessionStats> | null;
  /** False: a partial answer read only the session's header line (a store never listed,
   * still being counted): `events`, `head` and `stats` are null and `endedAt` may be too;
   * placed by the header's start time, it may move once counted. */
  counted?: boolean;
}

export interface SessionsParams extends FolderParams {
  offset?: number;
  limit?: number;
  query?: string;
}

export interface SessionsResult {
  sessions: SessionInfo[];
  total: number;
  /** A just-started server's saved first page, not checked against the session files, or
   * on a store never listed every session as far as known before counting (see
   * `SessionInfo.counted`); a `turnback/didChange` naming no session follows when the full
   * listing is done, and the cache then asks again (it drops the listing on every
   * didChange). */
  partial?: boolean;
}

export interface SessionParams extends FolderParams {
  sessionId: string;
  offset?: number;
  limit?: number;
}

export interface SessionEvent {
  id: string;
  parent: string | null;
  ts: string;
  kind: string;
  summary?: string;
  data?: Record<string, unknown>;
}

export interface SessionResult {
  session: SessionInfo;
  head: string | null;
  events: SessionEvent[];
  total: number;
}

export interface CheckpointsParams extends FolderParams {
  sessionId?: string;
}

export interface Checkpoint {
  id: string;
  label: string;
  ts: string;
  sessionId: string | null;
  eventId: string | null;
  auto: boolean;
  partial: boolean;
  files?: number;
  bytes?: number;
  skipped?: { path: string; reason: string; size?: number }[];
  /** The machine it was pulled from (turnback/pullHistory): its files can be rewound to, not its conversation. */
  origin?: string;
  /**
   * A rewind's or an undo's safety checkpoint: the operation, the checkpoint it went to,
   * and what it was taken before in words, "before undo of rewind to “Tests pass”"
   * (turnback/checkpoints; older servers leave it out, and the label says it with an id).
   * `op` is read as any string: a later server may name an operation this one does not know.
   */
  safetyOf?: { op: SafetyOp | (string & {}); checkpoint: string; words?: string };
}

export interface CheckpointsResult {
  checkpoints: Checkpoint[];
}

export interface CreateCheckpointParams extends FolderParams {
  sessionId?: string;
  label?: string;
}

export interface CreateCheckpointResult {
  checkpoint: Checkpoint;
}

export type ChangeStatus = 'added' | 'modified' | 'deleted';

export interface ChangesParams extends FolderParams {
  from: string;
  /** Absent: the working tree. */
  to?: string;
}

export interface Change {
  path: string;
  status: ChangeStatus;
  binary: boolean;
  linesAdded: number;
  linesRemoved: number;
  kind?: string;
  modeChanged?: boolean;
}

export interface ChangesResult {
  changes: Change[];
}

export interface FileContentParams extends FolderParams {
  checkpoint: string;
  path: string;
}

export interface FileContentResult {
  path: string;
  exists: boolean;
  binary: boolean;
  size: number;
  text?: string;
  kind?: string;
}

export type RewindMode = 'files' | 'conversation' | 'both';

export interface RewindParams extends FolderParams {
  checkpoint: string;
  paths?: string[];
  mode?: RewindMode;
  dryRun?: boolean;
}

export interface RewindResult {
  /** Every path whose content was put in place (overwritten + created). */
  written: string[];
  overwritten?: string[];
  created?: string[];
  removed: string[];
  safetyCheckpoint: string | null;
  dryRun: boolean;
  mode?: RewindMode;
  checkpoint?: string | null;
  head?: string | null;
}

export interface UndoParams extends FolderParams {
  dryRun?: boolean;
}

export interface ForkParams extends FolderParams {
  eventId: string;
  sessionId?: string;
}

export interface ForkResult {
  sessionId: string;
  head: string;
}

/**
 * The agents whose sessions an import finds where the agent keeps them (a path is
 * optional); the other sources are file formats, read from a path given.
 */
export const AGENT_SOURCES = [
  'claude-code',
  'codex',
  'aider',
  'gemini-cli',
  'qwen-code',
  'cline',
  'roo-code',
  'kilo-code',
  'crush',
  'opencode-go',
  'copilot-cli',
  'opencode',
  'copilot-chat',
  'continue',
] as const;

export const IMPORT_SOURCES = [
  ...AGENT_SOURCES,
  'ralph',
  'checkpoint-json',
  'event-records',
  'meta-jsonl',
  'snapshot-json',
  'turnback',
] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

export interface ImportParams extends FolderParams {
  source: ImportSource;
  path?: string;
}

export interface ImportResult {
  sessions: string[];
  events: number;
}

export interface GcParams extends FolderParams {
  dryRun?: boolean;
}

export interface GcResult {
  objectsRemoved: number;
  bytesFreed: number;
  checkpointsDropped?: string[];
  dryRun?: boolean;
  bytes?: number;
}

export interface HooksParams extends FolderParams {
  action?: 'status' | 'install' | 'uninstall';
  /** One agent (e.g. 'claude-code'); absent: every agent with hooks. */
  agent?: string;
}

export interface HookState {
  agent: string;
  file: string;
  installed: boolean;
  events: Record<string, boolean>;
  note: string;
}

export interface HooksResult {
  hooks: HookState[];
  changed: Record<string, boolean>;
  folder: string;
}

/** turnback/pushHistory: this machine's history to a git remote (docs/SHARING.md). */
export interface PushHistoryParams extends FolderParams {
  remote?: string;
  dryRun?: boolean;
  /** session ids never to push again: the machine's history on the remote is replaced */
  forget?: string[];
}

export interface PushHistoryResult {
  url: string;
  ref: string;
  machine: string;
  sessions: number;
  checkpoints: number;
  newCheckpoints: number;
  objects: number;
  /** null: git did not say how many bytes it wrote (never for a dry run) */
  bytes: number | null;
  upToDate: boolean;
  dryRun: boolean;
  replaces: boolean;
  forgotten: string[];
  redactions: { where: string; kind: string; line: number }[];
}

export interface PullHistoryParams extends FolderParams {
  remote?: string;
}

export interface PulledMachine {
  machine: string;
  user: string;
  host: string;
  sessions: number;
  events: number;
  checkpoints: number;
  refused: string | null;
}

export interface PullHistoryResult {
  url: string;
  machine: string;
  machines: PulledMachine[];
}

export interface DidChangeParams {
  folder: string;
  sessions: string[];
  checkpoints: boolean;
}

export interface TurnsParams extends FolderParams {
  sessionId: string;
  /** Absent: the latest page. */
  offset?: number;
  limit?: number;
}

/** A prompt and everything until the next one (docs/PROTOCOL.md, turnback/turns). */
export interface Turn {
  id: string;
  index: number;
  prompt: string;
  ts: string;
  endTs: string;
  durationMs: number | null;
  events: number;
  toolCalls: number;
  toolCallsFailed: number;
  parentTurn: string | null;
  branchStart: boolean;
  onHeadPath: boolean | null;
  head: boolean;
  before: string | null;
  after: string | null;
  checkpoints: string[];
  lastEvent: string;
  changes: { files: number; linesAdded: number; linesRemoved: number } | null;
  nearest?: Checkpoint | null;
}

export interface TurnsResult {
  turns: Turn[];
  total: number;
  offset: number;
  session: SessionInfo;
}

export interface TurnStepsParams extends FolderParams {
  sessionId: string;
  turnId: string;
}

export interface Step {
  id: string;
  kind: string;
  label: string;
  ts: string;
  detail?: string;
  failed?: boolean;
  pending?: boolean;
  folded?: boolean;
  resultId?: string;
  checkpoint?: string;
  /** A rewind's or an undo's step: the safety checkpoint it took first. */
  safetyCheckpoint?: string;
}

export interface TurnStepsResult {
  steps: Step[];
}

export interface FileHistoryParams extends FolderParams {
  path: string;
  offset?: number;
  limit?: number;
}

export interface FileVersion {
  checkpoint: Checkpoint;
  previous: string | null;
  previousLabel: string | null;
  status: ChangeStatus;
  linesAdded: number;
  linesRemoved: number;
  binary: boolean;
  sessionId: string | null;
  turnId: string | null;
  turnPrompt: string;
  agent: string;
  /** A rewind's or undo's safety checkpoint: the files as they were before it. */
  safety: boolean;
}

export interface FileHistoryResult {
  path: string;
  versions: FileVersion[];
  total: number;
  offset: number;
}

export interface BlameParams extends FolderParams {
  path: string;
  checkpoint?: string;
  /** The editor's unsaved text, blamed instead of the file on disk. */
  text?: string;
  /** Only the lines startLine..endLine (1-based, inclusive) in `ranges`. */
  startLine?: number;
  endLine?: number;
}

export type OriginKind = 'turn' | 'shared' | 'person' | 'initial' | 'uncommitted';

export interface OriginTurn {
  id: string;
  index: number;
  prompt: string;
  ts: string;
  endTs: string;
  /** The checkpoints the turn started and ended with. */
  before: string;
  after: string;
}

/** Where a line came from (docs/ATTRIBUTION.md). */
export interface LineOrigin {
  kind: OriginKind;
  agent: string | null;
  model: string | null;
  sessionId: string | null;
  turn: OriginTurn | null;
  checkpoint: string | null;
  previous: string | null;
  since: string | null;
  until: string | null;
  shared?: { sessionId: string; agent: string; model: string | null; turn: OriginTurn }[];
}

export interface BlameRange {
  start: number;
  end: number;
  /** Index in `BlameResult.origins`. */
  origin: number;
}

export interface BlameResult {
  path: string;
  checkpoint: string | null;
  lineCount: number;
  /** Lines of the whole file written in agents' turns (shared ones included). */
  agentLines: number;
  origins: LineOrigin[];
  ranges: BlameRange[];
}

export interface ImportCandidatesResult {
  sources: { source: string; summary: string; files: number }[];
  total: number;
}

export interface ContinueParams extends FolderParams {
  sessionId: string;
  turnId: string;
  dryRun?: boolean;
}

export interface ContinueResult {
  agent: string;
  source: string;
  lines: number;
  sessionId: string;
  sessionFile: string;
  command: string[];
  dryRun: boolean;
  rewind: RewindResult | null;
}

/** Params and result type of each request, so `request()` is typed by method name. */
export interface RequestTypes {
  'turnback/status': [FolderParams, StatusResult];
  'turnback/sessions': [SessionsParams, SessionsResult];
  'turnback/session': [SessionParams, SessionResult];
  'turnback/checkpoints': [CheckpointsParams, CheckpointsResult];
  'turnback/createCheckpoint': [CreateCheckpointParams, CreateCheckpointResult];
  'turnback/changes': [ChangesParams, ChangesResult];
  'turnback/fileContent': [FileContentParams, FileContentResult];
  'turnback/rewind': [RewindParams, RewindResult];
  'turnback/undo': [UndoParams, RewindResult];
  'turnback/fork': [ForkParams, ForkResult];
  'turnback/import': [ImportParams, ImportResult];
  'turnback/gc': [GcParams, GcResult];
  'turnback/hooks': [HooksParams, HooksResult];
  'turnback/turns': [TurnsParams, TurnsResult];
  'turnback/turnSteps': [TurnStepsParams, TurnStepsResult];
  'turnback/fileHistory': [FileHistoryParams, FileHistoryResult];
  'turnback/importCandidates': [FolderParams, ImportCandidatesResult];
  'turnback/continue': [ContinueParams, ContinueResult];
  'turnback/pushHistory': [PushHistoryParams, PushHistoryResult];
  'turnback/pullHistory': [PullHistoryParams, PullHistoryResult];
  'turnback/blame': [BlameParams, BlameResult];
}

export type RequestMethod = keyof RequestTypes;
export type ParamsOf<M extends RequestMethod> = RequestTypes[M][0];
export type ResultOf<M extends RequestMethod> = RequestTypes[M][1];
