import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { codeSpan, escapeMarkdown } from '../src/markdown';
import { liveLinks } from './liveMarkdown';

const BEACON = '![](https://evil.example/b.png)';
const REWIND = '[Compare](command:turnback.rewindBeforeLineTurn?%5B%7B%7D%5D)';

describe('markdown from hostile text', () => {
  it('keeps a code span closed whatever the text holds', () => {
    assert.equal(codeSpan('src/app.py'), '`src/app.py`');
    assert.equal(codeSpan('a`b'), '``a`b``');
    assert.equal(codeSpan('``x'), '``` ``x ```');
    assert.equal(codeSpan('a\n\nb\x1b\u2028'), '`a\\n\\nb\\x1b\\u2028`');
    for (const hostile of [`x\n\n${REWIND}`, `x\`${BEACON}\``, `\`\` ${BEACON} \``, `x\r\n\r\n${BEACON}`]) {
      const md = `Changed ${codeSpan(hostile)} and ${codeSpan('b.py')}`;
      assert.deepEqual(liveLinks(md), [], md);
      assert.ok(!md.includes('\n'), md);
    }
  });

  it('escapes links, images, HTML and line breaks out of plain text', () => {
    for (const hostile of [REWIND, BEACON, '<img src=https://evil.example/b.png>', `a\n\n${BEACON}`, 'x\n===']) {
      const md = `**${escapeMarkdown(hostile)}**`;
      assert.deepEqual(liveLinks(md), [], md);
      assert.ok(!md.includes('\n'), md);
    }
  });

  it('finds what would be live (the check itself)', () => {
    assert.deepEqual(liveLinks(`a ${BEACON} \`${REWIND}\` b`), ['https://evil.example/b.png']);
    assert.deepEqual(liveLinks(`\`x\n\n${REWIND}\``), ['command:turnback.rewindBeforeLineTurn?%5B%7B%7D%5D']);
  });
});
