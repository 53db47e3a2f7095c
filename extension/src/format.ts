/**
 * Human-readable figures for labels, tooltips and messages. Pure functions: the
 * clock is a parameter so that tests (and the status bar's timer) decide "now".
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Milliseconds since the epoch for an ISO 8601 timestamp, or undefined. */
export function parseTime(ts: string | null | undefined): number | undefined {
  if (!ts) {
    return undefined;
  }
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? undefined : ms;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago", or the date for anything older than a month. */
export function formatAge(ts: string | null | undefined, now: number): string {
  const t = parseTime(ts);
  if (t === undefined) {
    return 'unknown time';
  }
  const delta = now - t;
  if (delta < -MINUTE) {
    // A clock skew between machines; saying "in the future" would only confuse.
    return formatDate(t);
  }
  if (delta < 45 * SECOND) {
    return 'just now';
  }
  if (delta < HOUR) {
    return `${String(Math.max(1, Math.round(delta / MINUTE)))} min ago`;
  }
  if (delta < DAY) {
    return `${String(Math.floor(delta / HOUR))} h ago`;
  }
  if (delta < 30 * DAY) {
    const days = Math.floor(delta / DAY);
    return days === 1 ? 'yesterday' : `${String(days)} days ago`;
  }
  return formatDate(t);
}

/** The short age used in the status bar: "now", "5m", "3h", "2d", "7w". */
export function formatShortAge(ts: string | null | undefined, now: number): string {
  const t = parseTime(ts);
  if (t === undefined) {
    return '?';
  }
  const delta = Math.max(0, now - t);
  if (delta < MINUTE) {
    return 'now';
  }
  if (delta < HOUR) {
    return `${String(Math.floor(delta / MINUTE))}m`;
  }
  if (delta < DAY) {
    return `${String(Math.floor(delta / HOUR))}h`;
  }
  if (delta < 14 * DAY) {
    return `${String(Math.floor(delta / DAY))}d`;
  }
  return `${String(Math.floor(delta / (7 * DAY)))}w`;
}

function pad2(n: number): string {
  return n < 10 ? `0${String(n)}` : String(n);
}

/**
 * Minutes east of UTC on this machine at `ms` (its zone's rule for that day, summer time
 * included): the clock the user reads everywhere else. Times are shown in it; tooltips
 * name it ("UTC+1"). Tests pass an offset of their own.
 */
export function localOffset(ms: number): number {
  const minutes = -new Date(ms).getTimezoneOffset();
  return Object.is(minutes, -0) ? 0 : minutes;
}

/** `ms` moved by `offset` minutes, so that its UTC fields read as that zone's clock. */
function shifted(ms: number, offset: number): Date {
  return new Date(ms + offset * MINUTE);
}

/** "UTC", "UTC+1", "UTC-5", "UTC+5:30": the zone of a shown time. */
export function zoneName(offset: number): string {
  if (offset === 0) {
    return 'UTC';
  }
  const sign = offset > 0 ? '+' : '-';
  const abs = Math.abs(offset);
  const minutes = abs % 60;
  return `UTC${sign}${String(Math.floor(abs / 60))}${minutes === 0 ? '' : `:${pad2(minutes)}`}`;
}

/** "2026-11-21", in the local zone (or `offset` minutes east of UTC). */
export function formatDate(ms: number, offset = localOffset(ms)): string {
  const d = shifted(ms, offset);
  return `${String(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/** "2026-11-21 15:03:07 UTC+1", for tooltips: local time, its zone named. */
export function formatTimestamp(ts: string | null | undefined, offset?: number): string {
  const t = parseTime(ts);
  if (t === undefined) {
    return ts ?? 'unknown';
  }
  const zone = offset ?? localOffset(t);
  return `${formatDate(t, zone)} ${formatClock(ts, zone)} ${zoneName(zone)}`;
}

/**
 * "15:03:07", the time of an event within its session, on the local clock (it was UTC
 * with no mark, an hour or more off the clock beside it for most people).
 */
export function formatClock(ts: string | null | undefined, offset?: number): string {
  const t = parseTime(ts);
  if (t === undefined) {
    return '';
  }
  const d = shifted(t, offset ?? localOffset(t));
  return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

/** "850 ms", "12 s", "4 min 05 s", "2 h 03 min". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) {
    return 'unknown';
  }
  if (ms < SECOND) {
    return `${String(Math.round(ms))} ms`;
  }
  if (ms < MINUTE) {
    return `${String(Math.round(ms / SECOND))} s`;
  }
  if (ms < HOUR) {
    const m = Math.floor(ms / MINUTE);
    return `${String(m)} min ${pad2(Math.floor((ms % MINUTE) / SECOND))} s`;
  }
  const h = Math.floor(ms / HOUR);
  return `${String(h)} h ${pad2(Math.floor((ms % HOUR) / MINUTE))} min`;
}

/** "512 B", "1.5 KB", "12 MB", "3.2 GB" (powers of 1024, as file managers show). */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes < 0) {
    return 'unknown size';
  }
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) {
    return `${String(value)} B`;
  }
  const shown = value < 10 ? value.toFixed(1) : String(Math.round(value));
  return `${shown} ${units[unit] ?? 'B'}`;
}

/** "1 file", "3 files"; `plural` defaults to the singular plus "s". */
export function countOf(n: number, singular: string, plural?: string): string {
  return `${formatCount(n)} ${n === 1 ? singular : (plural ?? `${singular}s`)}`;
}

/** 1234567 → "1,234,567". Fixed separators keep labels identical on every locale. */
export function formatCount(n: number): string {
  const s = String(Math.trunc(n));
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Ids are long; the first 8 characters identify one in practice (the server accepts prefixes ≥ 4). */
export function shortId(id: string | null | undefined): string {
  if (!id) {
    return '';
  }
  return id.length > 8 ? id.slice(0, 8) : id;
}

/**
 * Collapse whitespace and cut to `width` characters with an ellipsis; control and bidi
 * formatting characters are shown as escapes (`visible`). Reads words only until the
 * cut: labels come from transcripts and stores, where a title may be megabytes of words
 * (splitting all of it cost 2 s a 10 MB title; bench/RESULTS.md, redteam24).
 */
export function oneLine(text: string, width: number): string {
  const words = /\S+/g;
  let flat = '';
  for (let m = words.exec(text); m !== null && flat.length <= width; m = words.exec(text)) {
    const word = visible(m[0].length > width + 1 ? m[0].slice(0, width + 1) : m[0]);
    flat += flat.length > 0 ? ` ${word}` : word;
  }
  return flat.length > width ? `${flat.slice(0, Math.max(0, width - 1))}…` : flat;
}

/**
 * `oneLine`, cut after a whole word (and the punctuation that ends it left out) rather than
 * inside one, for a title that a sentence quotes: “… next to greet() wi…” read as a typo.
 * A first word longer than half the width is cut inside, as `oneLine` does.
 */
export function oneLineAtWord(text: string, width: number): string {
  const flat = oneLine(text, width * 2);
  if (flat.length <= width) {
    return flat;
  }
  const head = flat.slice(0, Math.max(0, width - 1));
  const end = flat[width - 1] === ' ' ? head.length : head.lastIndexOf(' ');
  if (end < width / 2) {
    return `${head}…`;
  }
  return `${head.slice(0, end).replace(/[\s,;:.\-–—]+$/u, '')}…`;
}

/**
 * Text for a label with its invisible characters made visible: controls (Cc), line and
 * paragraph separators and every format character (Cf: the bidi overrides, embeddings,
 * isolates and marks, zero-width spaces and joiners, U+FEFF, the soft hyphen, the tag
 * characters of U+E0000) as `\u202e`-style escapes (`\u{e0049}` past U+FFFF), so that a
 * name cannot reorder what follows it on screen (`invoice\u202efdp.exe` showing as
 * "invoiceexe.pdf"), hide a line break, pass for another ("main.py\u200b") or carry text
 * no one sees (tag characters). An emoji joined by U+200D shows the joiner: the price of
 * seeing the others. Combining marks show themselves.
 */
export function visible(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (c) => {
    const code = c.codePointAt(0) ?? 0;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Store text (an id, a URL, a name) inside a sentence of ours: one line, visible, ≤ 200 characters. */
export function inline(text: string): string {
  return oneLine(text, 200);
}

/** The most of a message shown in a notification; VS Code's own cut comes later and hides the end. */
export const MAX_MESSAGE = 2000;

/**
 * A message from the server or the store for a notification: `visible` line by line (its
 * line breaks kept: a modal's detail shows them, a toast folds them), cut at `MAX_MESSAGE`.
 * Server messages quote paths, ids and titles from the store, where a bidi override or a
 * megabyte title could reorder or drown the sentence around it.
 */
export function visibleMessage(text: string): string {
  const cut = text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text;
  return cut.split('\n').map(visible).join('\n');
}

/**
 * Text for a quick pick's label, description or detail, where VS Code renders `$(name)` as
 * an icon: a session titled `$(check) tests pass` or a file `$(alert).txt` showed a
 * check mark or a warning sign no one wrote. Each `$(name)` (VS Code's icon pattern) gets
 * a backslash before it, which VS Code takes away as it shows the rest literally; one
 * already there keeps its own, so `\$(x)` shows as written. Tree labels, notifications and
 * tooltips without `supportThemeIcons` render no icons and need none of this.
 */
export function noIcons(text: string): string {
  return text.replace(/\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g, (icon) => `\\${icon}`);
}

/** `visible` and `noIcons`: a name from the store, whole, for a quick pick. */
export function pickText(text: string): string {
  return noIcons(visible(text));
}

/**
 * A list of paths for a message: at most `max` shown, then "and N more".
 * Modal dialogs have no scroll bar worth the name, so long lists must be cut.
 */
export function listPaths(paths: readonly string[], max: number): string {
  if (paths.length === 0) {
    return '';
  }
  // one line a path: a file named with a line break could add lines of its own to a
  // rewind's confirmation ("Delete 0 files"), or reorder it with a bidi override
  const shown = paths.slice(0, max).map((p) => `  ${visible(p)}`);
  if (paths.length > max) {
    shown.push(`  … and ${formatCount(paths.length - max)} more`);
  }
  return shown.join('\n');
}
