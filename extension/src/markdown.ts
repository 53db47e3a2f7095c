/**
 * Text from transcripts and workspaces placed in Markdown (tooltips, the line hover).
 * That text is an attacker's: a file may be named with a backtick and a blank line, a
 * prompt may hold `[x](command:…)` or `![](https://…)`. The line hover enables three
 * commands, so text that escaped its span there became a clickable rewind (redteam24).
 * Pure, so every escape is unit-tested.
 */

/** Backslash-escapes every character Markdown gives a meaning to, and flattens line breaks. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ').replace(/[\\`*_{}[\]()#+\-.!|<>~&=]/g, (c) => `\\${c}`);
}

/**
 * A code span showing `text` as it is: a fence longer than any run of backticks in it
 * (CommonMark), padded when it starts or ends with one, and control characters shown as
 * `\n`, `\x1b`, … — a line break inside a span ends it at a blank line, and what follows
 * would be Markdown again.
 */
export function codeSpan(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is escaped
  const shown = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, controlEscape);
  let longest = 0;
  for (const run of shown.match(/`+/g) ?? []) {
    longest = Math.max(longest, run.length);
  }
  const fence = '`'.repeat(longest + 1);
  const pad = shown.startsWith('`') || shown.endsWith('`') || shown.length === 0 ? ' ' : '';
  return `${fence}${pad}${shown}${pad}${fence}`;
}

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function controlEscape(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`);
}
