import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type HostFacts, launchCommand, parseProbe, systemCandidates, venvInterpreter } from '../src/pythonCandidates';

function host(platform: NodeJS.Platform, files: string[], env: Record<string, string> = {}, home = '/home/me'): HostFacts {
  const set = new Set(files);
  return { platform, env, home, exists: (f) => set.has(f) };
}

const commands = (facts: HostFacts): string[] => systemCandidates(facts).map((c) => [c.command, ...c.args].join(' '));

describe('python discovery: Windows (platform faked)', () => {
  const home = 'C:\\Users\\me';
  it('tries the py launcher, then python.exe on PATH, then python.org installs newest first', () => {
    const facts = host(
      'win32',
      [
        'C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python312\\python.exe',
        'C:\\Program Files\\Python311\\python.exe',
      ],
      {},
      home,
    );
    assert.deepEqual(commands(facts), [
      'py -3',
      'python.exe',
      'python3.exe',
      'C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python312\\python.exe',
      'C:\\Program Files\\Python311\\python.exe',
    ]);
  });
  it('uses LOCALAPPDATA and ProgramFiles when set', () => {
    const facts = host('win32', ['D:\\Local\\Programs\\Python\\Python313\\python.exe', 'E:\\Apps\\Python310\\python.exe'], {
      LOCALAPPDATA: 'D:\\Local',
      ProgramFiles: 'E:\\Apps',
    });
    assert.ok(commands(facts).includes('D:\\Local\\Programs\\Python\\Python313\\python.exe'));
    assert.ok(commands(facts).includes('E:\\Apps\\Python310\\python.exe'));
  });
  it("finds a workspace's .venv\\Scripts\\python.exe", () => {
    const facts = host('win32', ['C:\\work\\proj\\.venv\\Scripts\\python.exe']);
    assert.equal(venvInterpreter('C:\\work\\proj', facts), 'C:\\work\\proj\\.venv\\Scripts\\python.exe');
    assert.equal(venvInterpreter('C:\\work\\other', facts), undefined);
  });
  it('finds the executable py -3 chose in the probe output (CRLF)', () => {
    assert.deepEqual(parseProbe('3.12\r\nC:\\Python312\\python.exe\r\n', 'py'), {
      version: { major: 3, minor: 12 },
      executable: 'C:\\Python312\\python.exe',
    });
  });
});

describe('python discovery: macOS (platform faked)', () => {
  it('names Homebrew (both prefixes), pyenv, python.org and the Xcode tools after PATH', () => {
    const facts = host('darwin', [
      '/opt/homebrew/bin/python3',
      '/usr/local/bin/python3',
      '/Users/me/.pyenv/shims/python3',
      '/Library/Frameworks/Python.framework/Versions/Current/bin/python3',
      '/usr/bin/python3',
    ], {}, '/Users/me');
    assert.deepEqual(commands(facts), [
      'python3',
      '/opt/homebrew/bin/python3',
      '/usr/local/bin/python3',
      '/Users/me/.pyenv/shims/python3',
      '/Library/Frameworks/Python.framework/Versions/Current/bin/python3',
      '/usr/bin/python3',
    ]);
  });
  it('leaves out what is not installed, and follows PYENV_ROOT', () => {
    const facts = host('darwin', ['/opt/pyenv/shims/python3'], { PYENV_ROOT: '/opt/pyenv' }, '/Users/me');
    assert.deepEqual(commands(facts), ['python3', '/opt/pyenv/shims/python3']);
  });
  it("finds a .venv's bin/python", () => {
    assert.equal(venvInterpreter('/w', host('darwin', ['/w/venv/bin/python'])), '/w/venv/bin/python');
  });
});

describe('python discovery: Linux', () => {
  it('tries python3 then python, and pyenv when present', () => {
    assert.deepEqual(commands(host('linux', [])), ['python3', 'python']);
    assert.deepEqual(commands(host('linux', ['/home/me/.pyenv/shims/python3'])), [
      'python3',
      'python',
      '/home/me/.pyenv/shims/python3',
    ]);
  });
  it('refuses a probe that printed no version', () => {
    assert.equal(parseProbe('Python 3.12\n', 'python3'), undefined);
    assert.deepEqual(parseProbe('3.11\n', 'python3'), { version: { major: 3, minor: 11 }, executable: 'python3' });
  });
});

describe('the command that starts the server', () => {
  const v = { major: 3, minor: 12 };
  it('is the probed path for a bare name, which would be looked up from the workspace', () => {
    assert.equal(launchCommand('python3', { version: v, executable: '/usr/bin/python3.12' }, 'linux'), '/usr/bin/python3.12');
    assert.equal(
      launchCommand('python.exe', { version: v, executable: 'C:\\Python312\\python.exe' }, 'win32'),
      'C:\\Python312\\python.exe',
    );
  });

  it('keeps a path as given (a venv, a wrapper), and a bare name the probe could not place', () => {
    assert.equal(launchCommand('/w/.venv/bin/python', { version: v, executable: '/usr/bin/python3.12' }, 'linux'), '/w/.venv/bin/python');
    assert.equal(launchCommand('C:\\tools\\py.cmd', { version: v, executable: 'C:\\Python312\\python.exe' }, 'win32'), 'C:\\tools\\py.cmd');
    assert.equal(launchCommand('python3', { version: v, executable: 'python3' }, 'linux'), 'python3');
    assert.equal(launchCommand('python3', { version: v, executable: 'C:\\Python312\\python.exe' }, 'linux'), 'python3');
  });
});
