import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  ABSENT,
  CHANGE_SCHEME,
  CONTENT_SCHEME,
  UriError,
  basename,
  changeUriParts,
  contentUriParts,
  decorationFor,
  dirname,
  folderAuthority,
  folderPath,
  parseChangeUri,
  parseContentUri,
} from '../src/uris';

const FOLDER = 'file:///home/me/my%20project';

describe('turnback: content URIs', () => {
  it("uses the file's path on disk as the URI path, so the editor knows the language and pairs it with the file", () => {
    const parts = contentUriParts({ folder: FOLDER, checkpoint: 'c0ffee12', path: 'src/app.py' });
    assert.equal(parts.scheme, CONTENT_SCHEME);
    assert.equal(parts.path, '/home/me/my project/src/app.py');
    assert.equal(basename(parts.path), 'app.py');
    assert.equal(folderPath('file:///c%3A/work/'), '/c:/work');
    assert.equal(folderPath('not a uri'), '');
  });

  it('round-trips awkward paths and folder URIs', () => {
    for (const path of ['a.txt', 'dir with space/x y.md', 'weird/#hash?q=1&x%20.ts', 'ünï/cödé.rs', 'a+b/c=d']) {
      const ref = { folder: FOLDER, checkpoint: 'abcdef0123456789', path };
      assert.deepEqual(parseContentUri(contentUriParts(ref)), ref);
    }
  });

  it('round-trips through percent-encoding of the query, as vscode.Uri.toString() does', () => {
    const ref = { folder: 'file:///c%3A/work', checkpoint: 'cp1', path: 'x.py' };
    const parts = contentUriParts(ref);
    const encoded = encodeURIComponent(parts.query);
    assert.deepEqual(parseContentUri({ query: decodeURIComponent(encoded) }), ref);
  });

  it('has an id for "no file" that no checkpoint can have', () => {
    const ref = { folder: FOLDER, checkpoint: ABSENT, path: 'gone.txt' };
    assert.deepEqual(parseContentUri(contentUriParts(ref)), ref);
    assert.doesNotMatch(ABSENT, /^[A-Za-z0-9]/);
  });

  it('rejects what it cannot read, naming the missing part', () => {
    assert.throws(() => parseContentUri({ query: 'checkpoint=x&path=a.py' }), /folder/);
    assert.throws(() => parseContentUri({ query: `folder=${FOLDER}&path=a.py` }), /checkpoint/);
    assert.throws(() => parseContentUri({ query: 'folder=f&checkpoint=c' }), UriError);
    assert.throws(() => contentUriParts({ folder: FOLDER, checkpoint: 'c', path: '/abs' }), /relative/);
    assert.throws(() => contentUriParts({ folder: FOLDER, checkpoint: 'c', path: '' }), /empty/);
  });
});

describe('turnback-change: URIs and decorations', () => {
  it('round-trips the status', () => {
    for (const status of ['added', 'modified', 'deleted'] as const) {
      const ref = { folder: FOLDER, checkpoint: 'cp', path: 'lib/x.ts', status };
      const parts = changeUriParts(ref);
      assert.equal(parts.scheme, CHANGE_SCHEME);
      assert.deepEqual(parseChangeUri(parts), ref);
    }
  });

  it('refuses an unknown status', () => {
    assert.throws(
      () => parseChangeUri({ query: 'folder=f&checkpoint=c&path=x&status=renamed' }),
      /unknown change status "renamed"/,
    );
  });

  it('decorates like the Source Control view', () => {
    assert.deepEqual(decorationFor('added'), {
      badge: 'A',
      tooltip: 'Added',
      color: 'gitDecoration.addedResourceForeground',
    });
    assert.equal(decorationFor('modified').badge, 'M');
    assert.equal(decorationFor('deleted').color, 'gitDecoration.deletedResourceForeground');
  });
});

describe('path helpers', () => {
  it('splits relative paths', () => {
    assert.equal(basename('src/app.py'), 'app.py');
    assert.equal(dirname('src/app.py'), 'src');
    assert.equal(dirname('app.py'), '');
    assert.equal(basename('app.py'), 'app.py');
  });
});

describe('turnback: Windows folders (drive letters, UNC shares)', () => {
  it("keeps a drive letter in the path as VS Code's Uri.path does", () => {
    const parts = contentUriParts({ folder: 'file:///c%3A/Users/me/my%20proj', checkpoint: 'c0ffee12', path: 'src/app.py' });
    assert.equal(parts.path, '/c:/Users/me/my proj/src/app.py');
    assert.equal(parts.authority, '');
    assert.equal(folderPath('file:///C:/work'), '/C:/work');
  });
  it("carries a UNC share's host as the authority, never as a '//' path (Uri.from refuses one)", () => {
    const folder = 'file://fileserver/share/proj';
    assert.equal(folderAuthority(folder), 'fileserver');
    const parts = changeUriParts({ folder, checkpoint: 'c0ffee12', path: 'a/b.txt', status: 'modified' });
    assert.equal(parts.authority, 'fileserver');
    assert.equal(parts.path, '/share/proj/a/b.txt');
    assert.ok(!parts.path.startsWith('//'));
    assert.deepEqual(parseChangeUri(parts), { folder, checkpoint: 'c0ffee12', path: 'a/b.txt', status: 'modified' });
    assert.equal(folderAuthority('file:///home/me'), '');
    assert.equal(folderAuthority('file://localhost/home/me'), '');
  });
});
