/**
 * The `turnback.*` settings as the server receives them (initializationOptions,
 * workspace/didChangeConfiguration and workspace/configuration), computed in one
 * place so that an untrusted workspace is read-only on every path. Pure: the
 * reader is a parameter.
 */

export const SECTION = 'turnback';

/** What `vscode.WorkspaceConfiguration` offers, narrowed to what is read here. */
export interface ConfigReader {
  get(key: string): unknown;
}

export interface Retention {
  keepLast: number | null;
  keepDays: number | null;
  quotaBytes: number | null;
}

export interface ServerSettings {
  storePath: string | null;
  autoCheckpoint: boolean;
  /** true/false, or per agent (`{"codex": false}`); the server keeps the old boolean working. */
  followAgents: boolean | Record<string, boolean>;
  watch: boolean;
  ignores: string[];
  sizeCapBytes: number | null;
  retention: Retention;
  /** Untrusted workspace: the server must not write to the workspace or the store. */
  readOnly: boolean;
}

function bool(v: unknown, fallback: boolean): boolean {
  return typeof v === 'boolean' ? v : fallback;
}

function count(v: unknown, min: number): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= min ? v : null;
}

function days(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

/**
 * Settings for the server. Values of the wrong type fall back to the default
 * (VS Code already flags them in settings.json) so that one typo does not stop
 * the server from starting.
 */
export function serverSettings(cfg: ConfigReader, trusted: boolean): ServerSettings {
  const storePath = cfg.get('storePath');
  const ignores = cfg.get('ignores');
  const retention = cfg.get('retention');
  const r = typeof retention === 'object' && retention !== null ? (retention as Record<string, unknown>) : {};
  return {
    storePath: typeof storePath === 'string' && storePath.trim().length > 0 ? storePath.trim() : null,
    // An untrusted workspace is browsed, never written: no automatic
    // checkpoints and no following of agents' transcripts into the store.
    autoCheckpoint: trusted && bool(cfg.get('autoCheckpoint'), true),
    followAgents: trusted && followAgents(cfg.get('followAgents')),
    watch: bool(cfg.get('watch'), true),
    ignores: Array.isArray(ignores)
      ? ignores.filter((p): p is string => typeof p === 'string' && p.length > 0)
      : [],
    sizeCapBytes: count(cfg.get('sizeCapBytes'), 1),
    retention: {
      keepLast: count(r.keepLast, 0),
      keepDays: days(r.keepDays),
      quotaBytes: count(r.quotaBytes, 0),
    },
    readOnly: !trusted,
  };
}

function followAgents(v: unknown): boolean | Record<string, boolean> {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const out: Record<string, boolean> = {};
    for (const [agent, on] of Object.entries(v)) {
      if (typeof on === 'boolean') {
        out[agent] = on;
      }
    }
    return out;
  }
  return bool(v, true);
}

/** Page size of the tree, clamped to the range package.json declares. */
export function pageSize(cfg: ConfigReader): number {
  const v = cfg.get('pageSize');
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    return 200;
  }
  return Math.min(5000, Math.max(10, Math.trunc(v)));
}

/**
 * How many characters of a tree row's label are shown before its description (the time):
 * VS Code gives a tree no width, nor an event when the sidebar is resized, so the cut
 * cannot follow the sidebar; a user with a wide one sets more. Clamped to the range
 * package.json declares; the default fits the default sidebar (about 440 px).
 */
export function rowLabelWidth(cfg: ConfigReader, fallback: number): number {
  const v = cfg.get('rowLabelWidth');
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    return fallback;
  }
  return Math.min(200, Math.max(20, Math.trunc(v)));
}
