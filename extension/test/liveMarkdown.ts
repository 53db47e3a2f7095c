/**
 * What of a Markdown string would render as a link or an image, found the way CommonMark
 * reads it, enough for the tests of hostile text: paragraphs end at a blank line, a code
 * span runs from a backtick run to the next run of the same length in its paragraph, a
 * backslash escapes the next character. Not a renderer: a check that text from a
 * transcript or a file name stayed text.
 */

/** The targets of every link (`[t](x)`) and image (`![t](x)`) left live, in order. */
export function liveLinks(markdown: string): string[] {
  const found: string[] = [];
  for (const para of markdown.split(/\n[ \t]*\n/)) {
    const text = stripEscapes(stripCodeSpans(para));
    for (const m of text.matchAll(/\]\(([^)\s]*)/g)) {
      found.push(m[1] ?? '');
    }
    if (/<\s*img\b/i.test(text)) {
      found.push('<img>');
    }
  }
  return found;
}

function stripCodeSpans(para: string): string {
  let out = '';
  let i = 0;
  while (i < para.length) {
    if (para[i] === '\\') {
      out += para.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (para[i] !== '`') {
      out += para[i] ?? '';
      i += 1;
      continue;
    }
    let n = 0;
    while (para[i + n] === '`') {
      n += 1;
    }
    const close = new RegExp(`(?<!\`)\`{${String(n)}}(?!\`)`, 'g');
    close.lastIndex = i + n;
    const m = close.exec(para);
    if (m === null) {
      out += '`'.repeat(n); // no closing run: the backticks are text, and so is what follows
      i += n;
    } else {
      out += ' ';
      i = m.index + n;
    }
  }
  return out;
}

function stripEscapes(text: string): string {
  return text.replace(/\\[!-/:-@[-`{-~]/g, '');
}
