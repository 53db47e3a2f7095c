/**
 * Whether the server starts by itself when the extension activates (or when
 * trust, folders or settings change), rather than when the view is opened or a
 * command runs. Pure: the caller says what it saw.
 *
 * The extension activates in every window (`onStartupFinished`): agents keep
 * their sessions outside the folder (`~/.claude/projects/…`), so no
 * `workspaceContains:` pattern can say "an agent worked here", and the server is
 * what looks. It looks only where it may: a trusted folder with
 * `turnback.followAgents` on. An untrusted folder without a store reads
 * nothing, and no server runs for it until the user opens the view.
 */

export interface AutostartInput {
  /** Workspace folders open. */
  folders: number;
  /** VS Code trusts the workspace. */
  trusted: boolean;
  /** Some folder has a store already (`.turnback`, or `turnback.storePath` is set). */
  hasStore: boolean;
  /** `turnback.followAgents` as configured (true, false or per agent). */
  followAgents: unknown;
}

export interface Autostart {
  start: boolean;
  /** Why, for the output channel. */
  why: string;
}

/**
 * Whether `turnback.followAgents` leaves any agent followed: `false` turns all
 * off; an object turns single agents off and leaves the others on (the default).
 */
export function followsAnyAgent(value: unknown): boolean {
  return typeof value === 'boolean' ? value : true;
}

export function autostart(input: AutostartInput): Autostart {
  if (input.folders === 0) {
    return { start: false, why: 'no folder is open' };
  }
  if (input.hasStore) {
    // A store to show (browsed only, when untrusted): as before, on activation.
    return { start: true, why: 'a folder has a Turnback store' };
  }
  if (!input.trusted) {
    return { start: false, why: 'the workspace is not trusted: nothing is read' };
  }
  if (!followsAnyAgent(input.followAgents)) {
    return { start: false, why: 'turnback.followAgents is off' };
  }
  return { start: true, why: "following agents: their sessions of this folder are imported and followed" };
}
