"""Build ``bundled/``: the Turnback server and its dependencies, inside the .vsix.

As Microsoft's python-tools extension template does, the dependencies are
installed into folders with ``--target``, so that a user needs nothing but a
Python interpreter. The installer is uv (``uv pip install --target
--python-version X.Y --python-platform P``): unlike pip, which evaluates
environment markers for the interpreter running it, uv resolves them for the
version being bundled, so Python 3.10 gets the backports its dependencies ask
for (``exceptiongroup``). Some of them (orjson, blake3, zstandard, watchfiles) are
compiled extensions built for one CPython version and one platform each, so
they are installed once per supported version:

    bundled/tool/turnback/     the package (a copy of server/turnback)
    bundled/libs/cp3XX/        what differs between versions (compiled wheels)
    bundled/libs/common/       what every version shares (pure-Python wheels)
    bundled/manifest.json      the versions and the platform carried

``--target`` bundles for another VS Code target (``darwin-arm64``, ``win32-x64``, …): uv
resolves that platform's wheels. A version with no wheel of some dependency there is left
out, named in the manifest's ``leftOut`` (docs/EXTENSION.md lists them); a foreign
bundle is checked by the file type of its compiled modules (``check_vsix.py``), since it
cannot be imported here.

The extension puts ``tool``, ``libs/cp3XX`` and ``libs/common`` on PYTHONPATH
(extension/src/launch.ts). Re-running is cheap: the install is skipped while the
requirements, versions, platform and this script are unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# TURNBACK_BUNDLE_DIR: build elsewhere (the tests do, leaving the repository's bundled/ be)
BUNDLED = Path(os.environ.get("TURNBACK_BUNDLE_DIR") or ROOT / "bundled")
SOURCE = ROOT / "server" / "turnback"

# CPython versions carried. Turnback runs on 3.10+ (pyproject.toml).
DEFAULT_VERSIONS = ("3.10", "3.11", "3.12", "3.13", "3.14")

# uv's --python-platform per VS Code target. manylinux_2_17 (glibc 2.17) or
# older wheels only, so that the bundle runs on as many distributions as possible.
UV_PLATFORMS = {
    "linux-x64": "x86_64-manylinux_2_17",
    "linux-arm64": "aarch64-manylinux_2_17",
    "darwin-x64": "x86_64-apple-darwin",
    "darwin-arm64": "aarch64-apple-darwin",
    "win32-x64": "x86_64-pc-windows-msvc",
    "win32-arm64": "aarch64-pc-windows-msvc",
}
TARGETS = tuple(UV_PLATFORMS)


class NoWheels(Exception):
    """A pinned dependency has no wheel for this CPython version on this platform."""


def vscode_target() -> str:
    """VS Code's name of this machine's platform ("linux-x64", "darwin-arm64", …)."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(
        sys.platform, sys.platform
    )
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    return f"{system}-{arch}"


def requirements() -> list[str]:
    """The pinned ``[project].dependencies`` of pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib

        deps = tomllib.loads(text)["project"]["dependencies"]
    except ModuleNotFoundError:  # Python 3.10 has no tomllib
        block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.S | re.M)
        if block is None:
            raise SystemExit("pyproject.toml: no [project] dependencies list found") from None
        deps = re.findall(r'"([^"]+)"', block.group(1))
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise SystemExit("pyproject.toml: [project].dependencies must be a list of strings")
    return [str(d) for d in deps]


def tree_hash(path: Path) -> str:
    """A hash of a file or folder's names and bytes, to find what versions share."""
    h = hashlib.sha256()
    items = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for p in items:
        h.update(str(p.relative_to(path.parent)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def install(version: str, dest: Path, reqs: list[str], target: str) -> None:
    """Install ``reqs`` for ``version`` on ``target`` into ``dest``; ``NoWheels`` (with
    uv's reason) when PyPI has no wheel of some dependency for them."""
    plat = UV_PLATFORMS.get(target)
    if plat is None:
        raise SystemExit(
            f"bundle: no wheel platform known for VS Code target {target!r}; "
            f"add it to UV_PLATFORMS (known: {', '.join(UV_PLATFORMS)})"
        )
    if importlib.util.find_spec("uv") is None:
        raise SystemExit(
            f"bundle: uv is not installed for {sys.executable}; run 'bash scripts/setup.sh' "
            "(it installs the pinned dev tools into .venv) and build with .venv/bin/python"
        )
    cmd = [
        sys.executable,
        "-m",
        "uv",
        "pip",
        "install",
        "--quiet",
        "--no-build",  # wheels only: nothing is compiled on the build machine
        "--no-compile-bytecode",  # .pyc files are written by the user's interpreter
        "--target",
        str(dest),
        "--python-version",
        version,
        "--python-platform",
        plat,
        *reqs,
    ]
    print(f"bundle: uv pip install for Python {version} ({target})", flush=True)
    done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        why = [ln.strip() for ln in done.stderr.splitlines() if "no usable wheels" in ln]
        if why:
            raise NoWheels(why[0].removeprefix("cause: ").removeprefix("╰─▶ "))
        sys.stderr.write(done.stderr)
        raise SystemExit(f"bundle: uv pip install failed for Python {version} ({target})")
    slim(dest, native=target == vscode_target())


def slim(dest: Path, native: bool = True) -> None:
    """Drops what the server never loads; the .vsix is downloaded by every user."""
    # Console scripts (bin/) point at the build machine's interpreter: useless here.
    shutil.rmtree(dest / "bin", ignore_errors=True)
    # zstandard ships a second, CFFI-based backend (12 MB per version) that it
    # only falls back to when its C extension cannot load; the C one is carried.
    for p in (dest / "zstandard").glob("*cffi*"):
        p.unlink()
    # Debug sections are most of a compiled extension's size; the code is untouched.
    # Only for this machine's own format: the host's strip cannot read Mach-O or PE.
    strip = shutil.which("strip")
    if strip is not None and native and sys.platform == "linux":
        for so in dest.rglob("*.so"):
            subprocess.run([strip, "--strip-debug", str(so)], check=True)


def split_common(staged: dict[str, Path], libs: Path) -> None:
    """Moves entries identical in every version to libs/common, the rest to libs/cp3XX."""
    names = set.intersection(*({p.name for p in d.iterdir()} for d in staged.values()))
    common = libs / "common"
    common.mkdir(parents=True)
    for name in sorted(names):
        hashes = {tree_hash(d / name) for d in staged.values()}
        if len(hashes) == 1:
            first = next(iter(staged.values()))
            shutil.move(str(first / name), str(common / name))
            for d in list(staged.values())[1:]:
                shutil.rmtree(d / name) if (d / name).is_dir() else (d / name).unlink()
    for version, d in staged.items():
        shutil.move(str(d), str(libs / ("cp" + version.replace(".", ""))))


def copy_package() -> None:
    """bundled/tool/turnback: the server's sources as they are now. Not the optional
    compiled folder check an editable install built in place (``snapshot/_folderparts``:
    one CPython version, this machine's platform): the bundle runs its Python path."""
    dest = BUNDLED / "tool" / "turnback"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(SOURCE, dest, ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "*.so", "*.pyd", "*.c"))


def find_interpreter(version: str) -> str | None:
    """A runnable CPython ``version`` on this machine (PATH, then pyenv's versions), or None."""
    host = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [sys.executable] if version == host else []
    on_path = shutil.which(f"python{version}")
    if on_path is not None:
        candidates.append(on_path)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += [str(p) for p in sorted(pyenv.glob(f"{version}*/bin/python{version}"))]
    for exe in candidates:
        probe = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        # A pyenv shim of a version that is not selected exits non-zero: skip it.
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return exe
    return None


def smoke_test(versions: list[str]) -> None:
    """Imports the server from the bundle, as the extension will, with each interpreter here."""
    tested = 0
    for version in versions:
        exe = find_interpreter(version)
        if exe is None:
            print(f"bundle: no Python {version} here; its bundle is not import-tested", flush=True)
            continue
        tag = "cp" + version.replace(".", "")
        path = os.pathsep.join(
            str(p) for p in (BUNDLED / "tool", BUNDLED / "libs" / tag, BUNDLED / "libs" / "common")
        )
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env.update(PYTHONPATH=path, PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
        code = (
            "import sys, turnback.server.app\n"
            "import pygls, lsprotocol, orjson, blake3, zstandard, watchfiles\n"
            "for m in (turnback, pygls, lsprotocol, orjson, blake3, zstandard, watchfiles):\n"
            "    assert m.__file__.startswith(sys.argv[1]), m.__file__\n"
        )
        # -S: no site-packages at all, so every import must come from the bundle
        # (-I would also drop PYTHONPATH).
        subprocess.run(
            [exe, "-S", "-c", code, str(BUNDLED)], env=env, check=True, cwd=tempfile.gettempdir()
        )
        print(f"bundle: Python {version} ({exe}) imports the bundled server", flush=True)
        tested += 1
    if tested == 0:
        raise SystemExit(
            f"bundle: no interpreter of {', '.join(versions)} here to check the bundle with"
        )


NOTHING = "bundle: no CPython version has wheels for every dependency on this target"
NOTHING_CODE = 3  # package-extension.sh leaves such a target out (said in docs/EXTENSION.md)


def stamp_left_out(stamp_file: Path) -> dict[str, str]:
    data = json.loads(stamp_file.read_text(encoding="utf-8"))
    return dict(data.get("leftOut") or {})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--force", action="store_true", help="reinstall the dependencies even if unchanged"
    )
    parser.add_argument(
        "--target", choices=TARGETS, default=None,
        help="the VS Code target to bundle for (default: this machine's)",
    )
    args = parser.parse_args()

    versions = os.environ.get("TURNBACK_PYTHON_VERSIONS", " ".join(DEFAULT_VERSIONS)).split()
    target = args.target or vscode_target()
    reqs = requirements()
    stamp = {
        "requirements": reqs,
        "versions": versions,
        "platform": target,
        "script": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
    }
    # Outside bundled/ (which is copied into the .vsix whole); .cache/ is ignored by git.
    stamp_file = (BUNDLED.with_name(BUNDLED.name + ".stamp.json")
                  if os.environ.get("TURNBACK_BUNDLE_DIR") else ROOT / ".cache" / "bundle-python.json")
    fresh = (
        not args.force
        and stamp_file.is_file()
        and {k: v for k, v in json.loads(stamp_file.read_text(encoding="utf-8")).items()
             if k != "leftOut"} == stamp
        and (BUNDLED / "libs").is_dir()
    )
    left_out: dict[str, str] = {}
    if fresh:
        print("bundle: dependencies up to date", flush=True)
        left_out = stamp_left_out(stamp_file)
    else:
        libs = BUNDLED / "libs"
        shutil.rmtree(libs, ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="turnback-bundle-") as tmp:
            staged = {v: Path(tmp) / v for v in versions}
            for v, d in list(staged.items()):
                try:
                    install(v, d, reqs, target)
                except NoWheels as exc:
                    # left out, not faked: the extension says this Python is not carried
                    print(f"bundle: Python {v} left out of {target}: {exc}", flush=True)
                    left_out[v] = str(exc)
                    del staged[v]
            if not staged:
                print(NOTHING, file=sys.stderr, flush=True)
                sys.exit(NOTHING_CODE)
            split_common(staged, libs)
        stamp_file.parent.mkdir(parents=True, exist_ok=True)
        stamp_file.write_text(json.dumps({**stamp, "leftOut": left_out}, indent=2) + "\n",
                              encoding="utf-8")
    carried = [v for v in versions if v not in left_out]
    copy_package()
    manifest = {"pythonVersions": carried, "platform": target, "requirements": reqs,
                "leftOut": left_out}
    (BUNDLED / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    if target == vscode_target():
        smoke_test(carried)
    else:
        print(f"bundle: {target} is not this machine's platform: its bundle is checked by "
              "file type (check_vsix.py), not imported", flush=True)


if __name__ == "__main__":
    main()
