/**
 * The File History view's rows: one per checkpoint where the file changed, newest
 * first, from turnback/fileHistory; the versions Turnback saved before a rewind or an
 * undo come after the file's own, inside one row. Pure (no VS Code), so labels are
 * unit-tested.
 */

import { countOf, formatAge, formatCount, oneLine } from '../format';
import type { FileHistoryResult, FileVersion } from '../protocol';
import { codeSpan, escapeMarkdown } from '../markdown';
import { rowLabel } from '../tree/labels';

export interface VersionRow {
  kind: 'version';
  key: string;
  folder: string;
  path: string;
  label: string;
  description: string;
  tooltip: string;
  contextValue: string;
  /** What the commands need: this version, the one before, its turn. */
  checkpoint: { id: string; title: string; previous?: { id: string; title: string } };
  status: FileVersion['status'];
  sessionId?: string;
  turnId?: string;
}

export interface InfoRow {
  kind: 'info' | 'more';
  key: string;
  label: string;
  description?: string;
}

/** The versions saved before rewinds and undos, folded into one row (expanded: them). */
export interface GroupRow {
  kind: 'group';
  key: string;
  label: string;
  description: string;
  tooltip: string;
  children: VersionRow[];
}

export type HistoryRow = VersionRow | InfoRow | GroupRow;

/** The safety group's label, and its tooltip's sentence. */
export const SAVED_GROUP_LABEL = 'Saved before rewinds and undos';

/** "+3 −1"; "binary"; "deleted". */
export function versionStat(v: Pick<FileVersion, 'status' | 'binary' | 'linesAdded' | 'linesRemoved'>): string {
  if (v.status === 'deleted') {
    return 'deleted';
  }
  if (v.binary) {
    return v.status === 'added' ? 'added (binary)' : 'binary';
  }
  return `+${formatCount(v.linesAdded)} −${formatCount(v.linesRemoved)}`;
}

function checkpointName(cp: FileVersion['checkpoint']): string {
  const first = cp.label.split('\n')[0]?.trim() ?? '';
  return first !== '' ? first : cp.id;
}

export function versionRow(folder: string, path: string, v: FileVersion, now: number): VersionRow {
  const title = checkpointName(v.checkpoint);
  // a safety checkpoint is named for what it is ("before rewind to …"): under its turn's
  // prompt it read like one more version the agent wrote
  const full = oneLine(v.turnPrompt !== '' && !v.safety ? v.turnPrompt : title, 200);
  const label = rowLabel(full); // the age after it stays in sight; the tooltip says it whole
  // the age first: VS Code cuts a row's end, and the age is what tells versions apart
  const parts = [formatAge(v.checkpoint.ts, now), versionStat(v)];
  if (v.safety) {
    parts.push('Turnback'); // taken by the rewind, not by the turn's agent
  } else if (v.agent !== '' && v.agent !== 'turnback') {
    parts.push(oneLine(v.agent, 40)); // a session header's text: one line, bounded, shown (redteam25)
  }
  const tags = ['version', v.status];
  if (v.turnId !== null && v.sessionId !== null) {
    tags.push('hasTurn');
  }
  const tip = [`**${escapeMarkdown(full)}**`, ''];
  if (v.safety) {
    const during = v.turnPrompt !== '' ? ` (turn “${escapeMarkdown(v.turnPrompt)}”)` : '';
    tip.push(`Saved by Turnback before a rewind or undo, so that it can be undone${during}`, '');
  }
  tip.push(
    `${codeSpan(path)} ${v.status} · ${versionStat(v)}`,
    `checkpoint “${escapeMarkdown(title)}” · ${escapeMarkdown(v.checkpoint.ts)}`,
  );
  if (v.previous !== null) {
    tip.push(`compared with “${escapeMarkdown(v.previousLabel?.split('\n')[0] ?? v.previous)}”`);
  }
  return {
    kind: 'version',
    key: `v|${folder}|${path}|${v.checkpoint.id}`,
    folder,
    path,
    label,
    description: parts.join(' · '),
    tooltip: tip.join('  \n'),
    contextValue: tags.join(' '),
    checkpoint: {
      id: v.checkpoint.id,
      title,
      previous: v.previous !== null ? { id: v.previous, title: v.previousLabel?.split('\n')[0] ?? v.previous } : undefined,
    },
    status: v.status,
    sessionId: v.sessionId ?? undefined,
    turnId: v.turnId ?? undefined,
  };
}

/**
 * The rows of a file's history: its own versions (the turns' and the user's checkpoints),
 * newest first, then the ones Turnback saved before a rewind or an undo in one row, newest
 * first inside: after a few rewinds those were most of the list, each as long as a real
 * one, and pushed the turns' versions out of sight. Each stays one expand away.
 */
export function historyRows(folder: string, result: FileHistoryResult, now: number): HistoryRow[] {
  const own: HistoryRow[] = [];
  const saved: VersionRow[] = [];
  for (const v of result.versions) {
    (v.safety ? saved : own).push(versionRow(folder, result.path, v, now));
  }
  const rows: HistoryRow[] = own;
  const newest = result.versions.find((v) => v.safety);
  if (saved.length > 0 && newest !== undefined) {
    rows.push({
      kind: 'group',
      key: `g|${folder}|${result.path}|saved`,
      label: SAVED_GROUP_LABEL,
      description: `${countOf(saved.length, 'version')} · newest ${formatAge(newest.checkpoint.ts, now)}`,
      tooltip:
        'The file as it was before each rewind or undo, saved by Turnback so that it can be undone. ' +
        'Expand to open or restore one.',
      children: saved,
    });
  }
  if (rows.length === 0) {
    rows.push({ kind: 'info', key: 'none', label: 'No checkpoint holds a change to this file', description: result.path });
  }
  if (result.total > result.versions.length) {
    rows.push({
      kind: 'more',
      key: 'more',
      label: 'Load more…',
      description: `${formatCount(result.versions.length)} of ${formatCount(result.total)} versions shown`,
    });
  }
  return rows;
}
