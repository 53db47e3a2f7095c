"""The .vsix of each VS Code target: ``extension/build/check_vsix.py`` (target, contents,
the file type of every compiled module) on made-up packages, and a real bundle for a
target that is not this machine's (win32-arm64: PE ARM64 ``.pyd`` modules; the CPython
versions PyPI has no wheels for there are left out and named, not faked).
``scripts/package-extension.sh --target all`` runs the same check on each .vsix."""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "extension" / "build" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


check_vsix = _load("check_vsix")


def elf(machine: int) -> bytes:
    return b"\x7fELF\x02\x01\x01" + bytes(11) + struct.pack("<H", machine) + bytes(40)


def macho(cpu: int) -> bytes:
    return b"\xcf\xfa\xed\xfe" + struct.pack("<I", cpu) + bytes(24)


def fat(*cpus: int) -> bytes:
    arches = b"".join(struct.pack(">IIIII", c, 0, 0, 0, 0) for c in cpus)
    return b"\xca\xfe\xba\xbe" + struct.pack(">I", len(cpus)) + arches


def pe(machine: int) -> bytes:
    head = bytearray(0x80)
    head[:2] = b"MZ"
    head[0x3C:0x40] = struct.pack("<I", 0x40)
    head[0x40:0x46] = b"PE\0\0" + struct.pack("<H", machine)
    return bytes(head)


def test_binary_kinds() -> None:
    kind = check_vsix.binary_kind
    assert kind(elf(0x3E)) == ("ELF", {"x86_64"})
    assert kind(elf(0xB7)) == ("ELF", {"arm64"})
    assert kind(macho(0x0100000C)) == ("Mach-O", {"arm64"})
    assert kind(fat(0x01000007, 0x0100000C)) == ("Mach-O", {"x86_64", "arm64"})
    assert kind(pe(0x8664)) == ("PE", {"x86_64"})
    assert kind(pe(0xAA64)) == ("PE", {"arm64"})
    assert kind(b"#!/bin/sh\n")[0] == "unknown"


def fake_vsix(path: Path, target: str, modules: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("extension.vsixmanifest",
                   f'<Identity Id="turnback" TargetPlatform="{target}" />')
        z.writestr("extension/bundled/manifest.json",
                   json.dumps({"platform": target, "pythonVersions": ["3.12"]}))
        for n in ("package.json", "dist/extension.js", "extension/media/turnback.svg",
                  "bundled/tool/turnback/server/__main__.py",
                  "bundled/tool/turnback/store/facade.py",
                  "bundled/libs/common/pygls/__init__.py",
                  "bundled/libs/common/lsprotocol/types.py",
                  "bundled/libs/cp312/orjson/__init__.py",
                  "bundled/libs/cp312/zstandard/__init__.py",
                  "bundled/libs/cp312/blake3/__init__.py"):
            z.writestr("extension/" + n, "")
        if target.startswith("linux"):
            z.writestr("extension/bundled/libs/common/inotify_simple.py", "")
        for n, data in modules.items():
            z.writestr("extension/bundled/libs/" + n, data)
    return path


def test_a_right_package_passes_and_a_wrong_one_is_named(tmp_path: Path) -> None:
    good = fake_vsix(tmp_path / "w.vsix", "win32-x64",
                     {"cp312/orjson/orjson.cp312-win_amd64.pyd": pe(0x8664)})
    assert check_vsix.check(str(good), "win32-x64") == []
    faults = check_vsix.check(str(good), "win32-arm64")
    assert any("TargetPlatform" in f or "names target" in f for f in faults)
    assert any("not PE for arm64" in f for f in faults)
    linux_in_mac = fake_vsix(tmp_path / "m.vsix", "darwin-arm64",
                             {"cp312/orjson/orjson.cpython-312-darwin.so": elf(0x3E),
                              "cp311/blake3/blake3.cpython-311-darwin.so": macho(0x0100000C)})
    faults = check_vsix.check(str(linux_in_mac), "darwin-arm64")
    assert any("is ELF" in f for f in faults)
    assert any("does not carry" in f for f in faults)  # a cp311 module, 3.11 not carried


needs_uv = pytest.mark.skipif(
    importlib.util.find_spec("uv") is None,
    reason="uv is not installed (scripts/setup.sh installs the dev tools)")


def bundle(tmp_path: Path, target: str, versions: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TURNBACK_BUNDLE_DIR": str(tmp_path / "bundled"),
           "TURNBACK_PYTHON_VERSIONS": versions}
    return subprocess.run([sys.executable, str(ROOT / "extension/build/bundle_python.py"),
                           "--target", target], env=env, capture_output=True, text=True,
                          timeout=600)


@needs_uv
def test_a_bundle_for_windows_holds_its_own_modules(tmp_path: Path) -> None:
    """A real bundle (wheels from PyPI through uv) for another OS."""
    done = bundle(tmp_path, "win32-x64", "3.12")
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "bundled"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["platform"] == "win32-x64" and manifest["pythonVersions"] == ["3.12"]
    modules = sorted(p for p in (out / "libs").rglob("*") if p.suffix in (".pyd", ".so"))
    names = {p.parent.name for p in modules}
    assert {"orjson", "blake3", "zstandard"} <= names, modules
    assert all(p.suffix == ".pyd" for p in modules), modules
    for p in modules:
        assert check_vsix.binary_kind(p.read_bytes()) == ("PE", {"x86_64"}), p
    assert not list((out / "libs").rglob("inotify_simple*"))  # the Linux watcher stays out


@needs_uv
def test_a_target_without_wheels_is_left_out_and_named(tmp_path: Path) -> None:
    """blake3 1.0.10 publishes no Windows-on-ARM wheel: nothing is faked, the target is
    left out (exit 3, which package-extension.sh reports)."""
    done = bundle(tmp_path, "win32-arm64", "3.13")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Python 3.13 left out of win32-arm64" in done.stdout
    assert "blake3" in done.stdout
