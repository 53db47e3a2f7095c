import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  countOf,
  formatAge,
  formatBytes,
  formatClock,
  formatCount,
  formatDate,
  formatDuration,
  formatShortAge,
  formatTimestamp,
  inline,
  listPaths,
  localOffset,
  oneLine,
  visible,
  shortId,
  zoneName,
} from '../src/format';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('formatAge', () => {
  it('reads like a person would say it', () => {
    assert.equal(formatAge(ago(10_000), NOW), 'just now');
    assert.equal(formatAge(ago(50_000), NOW), '1 min ago');
    assert.equal(formatAge(ago(5 * MIN), NOW), '5 min ago');
    assert.equal(formatAge(ago(3 * HOUR + 5 * MIN), NOW), '3 h ago');
    assert.equal(formatAge(ago(DAY + HOUR), NOW), 'yesterday');
    assert.equal(formatAge(ago(4 * DAY), NOW), '4 days ago');
  });

  it('gives the date beyond a month, and for clocks ahead of ours', () => {
    assert.equal(formatAge('2026-01-02T03:04:05Z', NOW), '2026-01-02');
    assert.equal(formatAge(new Date(NOW + 2 * HOUR).toISOString(), NOW), '2026-11-21');
  });

  it('says when the time is unknown', () => {
    assert.equal(formatAge(undefined, NOW), 'unknown time');
    assert.equal(formatAge('not a date', NOW), 'unknown time');
  });
});

describe('formatShortAge', () => {
  it('is compact for the status bar', () => {
    assert.equal(formatShortAge(ago(20_000), NOW), 'now');
    assert.equal(formatShortAge(ago(7 * MIN), NOW), '7m');
    assert.equal(formatShortAge(ago(5 * HOUR), NOW), '5h');
    assert.equal(formatShortAge(ago(3 * DAY), NOW), '3d');
    assert.equal(formatShortAge(ago(21 * DAY), NOW), '3w');
    assert.equal(formatShortAge(null, NOW), '?');
  });
});

describe('timestamps and durations', () => {
  it('prints the local time, and names its zone in a tooltip', () => {
    // 09:08:07 UTC was shown as "09:08:07", with no mark, to someone whose clock said 10:08
    const ts = '2026-11-21T09:08:07.123Z';
    assert.equal(formatClock(ts, 60), '10:08:07');
    assert.equal(formatClock(ts, -300), '04:08:07');
    assert.equal(formatTimestamp(ts, 60), '2026-11-21 10:08:07 UTC+1');
    assert.equal(formatTimestamp(ts, 330), '2026-11-21 14:38:07 UTC+5:30');
    assert.equal(formatTimestamp(ts, -600), '2026-11-20 23:08:07 UTC-10');
    assert.equal(formatTimestamp(ts, 0), '2026-11-21 09:08:07 UTC');
    assert.equal(formatDate(Date.parse('2026-11-21T23:30:00Z'), 60), '2026-11-22');
    assert.equal(zoneName(-570), 'UTC-9:30');
    assert.equal(formatClock('garbage'), '');
    assert.equal(formatTimestamp('garbage'), 'garbage');
  });

  it("takes the machine's zone, summer time included, when given none", () => {
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'Europe/Berlin';
      assert.equal(localOffset(Date.parse('2026-01-15T12:00:00Z')), 60);
      assert.equal(localOffset(Date.parse('2026-07-15T12:00:00Z')), 120);
      assert.equal(formatClock('2026-07-15T09:08:07Z'), '11:08:07');
      assert.equal(formatTimestamp('2026-01-15T09:08:07Z'), '2026-01-15 10:08:07 UTC+1');
      process.env.TZ = 'UTC';
      assert.equal(localOffset(Date.parse('2026-07-15T12:00:00Z')), 0);
      assert.equal(formatClock('2026-07-15T09:08:07Z'), '09:08:07');
    } finally {
      if (saved === undefined) {
        delete process.env.TZ;
      } else {
        process.env.TZ = saved;
      }
    }
  });

  it('formats durations at a useful precision', () => {
    assert.equal(formatDuration(850), '850 ms');
    assert.equal(formatDuration(12_400), '12 s');
    assert.equal(formatDuration(4 * MIN + 5_000), '4 min 05 s');
    assert.equal(formatDuration(2 * HOUR + 3 * MIN), '2 h 03 min');
    assert.equal(formatDuration(null), 'unknown');
    assert.equal(formatDuration(-1), 'unknown');
  });
});

describe('sizes and counts', () => {
  it('formats bytes in powers of 1024', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(1536), '1.5 KB');
    assert.equal(formatBytes(12 * 1024 * 1024), '12 MB');
    assert.equal(formatBytes(3.25 * 1024 ** 3), '3.3 GB');
    assert.equal(formatBytes(undefined), 'unknown size');
  });

  it('groups digits and picks singular or plural', () => {
    assert.equal(formatCount(1234567), '1,234,567');
    assert.equal(formatCount(999), '999');
    assert.equal(countOf(1, 'file'), '1 file');
    assert.equal(countOf(0, 'file'), '0 files');
    assert.equal(countOf(2500, 'entry', 'entries'), '2,500 entries');
  });
});

describe('text helpers', () => {
  it('shortens ids to 8 characters', () => {
    assert.equal(shortId('0123456789abcdef'), '01234567');
    assert.equal(shortId('abc'), 'abc');
    assert.equal(shortId(null), '');
  });

  it('flattens and cuts text', () => {
    assert.equal(oneLine('fix\n  the   tests', 80), 'fix the tests');
    assert.equal(oneLine('abcdefghij', 5), 'abcd…');
  });

  it('cuts as splitting the whole text did, reading only up to the cut', () => {
    const whole = (text: string, width: number): string => {
      const flat = text.split(/\s+/).filter((w) => w.length > 0).join(' ');
      return flat.length > width ? `${flat.slice(0, Math.max(0, width - 1))}…` : flat;
    };
    let seed = 7;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const alphabet = ['a', 'b', ' ', '\n', '\t', 'é', '…', '  '];
    for (let i = 0; i < 2000; i += 1) {
      const text = Array.from({ length: rand(40) }, () => alphabet[rand(alphabet.length)] ?? '').join('');
      const width = 1 + rand(20);
      assert.equal(oneLine(text, width), whole(text, width), JSON.stringify([text, width]));
    }
    assert.equal(oneLine(`${' '.repeat(1000)}x`, 80), 'x');
    assert.equal(oneLine('ab '.repeat(100_000), 8), 'ab ab a…');
  });

  it('shows control and bidi characters in labels as escapes', () => {
    // "invoice‮fdp.exe" would show as "invoiceexe.pdf"
    assert.equal(oneLine('invoice\u202efdp.exe', 80), 'invoice\\u202efdp.exe');
    assert.equal(oneLine('a\x1b[31mred\x00', 80), 'a\\u001b[31mred\\u0000');
    assert.equal(visible('x\u2066y\u2069\r\n'), 'x\\u2066y\\u2069\\u000d\\u000a');
    assert.equal(visible('plain — text'), 'plain — text');
  });

  it('shows zero-width and other invisible format characters in labels as escapes', () => {
    // a label that looks like another: "main.py" and "main.py\u200b" are two files; tag
    // characters (U+E0000 block) carry text no one sees ("ASCII smuggling") (redteam25)
    assert.equal(visible('main.py\u200b'), 'main.py\\u200b');
    assert.equal(visible('a\u2060b\ufeffc\u00adD\u180e'), 'a\\u2060b\\ufeffc\\u00adD\\u180e');
    assert.equal(oneLine('fix tests\u{e0049}\u{e0067}', 80), 'fix tests\\u{e0049}\\u{e0067}');
    assert.equal(visible('e\u0301 😀 中文'), 'e\u0301 😀 中文'); // a combining accent shows itself
  });

  it('cuts long path lists with a count of the rest', () => {
    assert.equal(listPaths([], 3), '');
    assert.equal(listPaths(['a', 'b'], 3), '  a\n  b');
    assert.equal(listPaths(['a', 'b', 'c', 'd', 'e'], 2), '  a\n  b\n  … and 3 more');
  });
});

describe('inline', () => {
  it('puts store text in a sentence as one visible line of at most 200 characters', () => {
    assert.equal(inline('origin'), 'origin');
    assert.equal(inline('https://h/x\u202egit.exe'), 'https://h/x\\u202egit.exe');
    assert.equal(inline('a\nb\tc'), 'a b c');
    const long = inline('m'.repeat(10_000));
    assert.equal(long.length, 200);
    assert.ok(long.endsWith('…'));
  });
});
