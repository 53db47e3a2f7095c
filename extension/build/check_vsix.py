"""Check a built .vsix: ``python check_vsix.py FILE TARGET``.

- the target: vsce's manifest (``extension.vsixmanifest``, ``TargetPlatform``) and the
  bundle's own (``bundled/manifest.json``) both name ``TARGET``;
- the contents: the bundle, the server package, every dependency folder for every CPython
  the bundle carries, nothing it must not carry;
- the compiled modules: each ``.so``/``.pyd`` is of the target's format and CPU — ELF
  (x86-64, AArch64) for Linux, Mach-O (x86_64, arm64, or universal with it) for macOS,
  PE (AMD64, ARM64) for Windows — and named for one of the carried versions (or abi3).

A foreign target's bundle cannot be imported on the build machine; this is what shows it
is the right one. Exits non-zero naming each fault.
"""

from __future__ import annotations

import json
import re
import struct
import sys
import zipfile

# (format, CPU) per VS Code target
EXPECTED = {
    "linux-x64": ("ELF", "x86_64"),
    "linux-arm64": ("ELF", "arm64"),
    "darwin-x64": ("Mach-O", "x86_64"),
    "darwin-arm64": ("Mach-O", "arm64"),
    "win32-x64": ("PE", "x86_64"),
    "win32-arm64": ("PE", "arm64"),
}
_ELF_MACHINES = {0x3E: "x86_64", 0xB7: "arm64"}
_MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64"}
_PE_MACHINES = {0x8664: "x86_64", 0xAA64: "arm64"}


def binary_kind(data: bytes) -> tuple[str, set[str]]:
    """The format of a compiled module and the CPUs it holds code for."""
    if data[:4] == b"\x7fELF":
        little = data[5] == 1
        (machine,) = struct.unpack_from("<H" if little else ">H", data, 18)
        return "ELF", {_ELF_MACHINES.get(machine, hex(machine))}
    if data[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit little-endian Mach-O
        (cpu,) = struct.unpack_from("<I", data, 4)
        return "Mach-O", {_MACHO_CPUS.get(cpu, hex(cpu))}
    if data[:4] == b"\xca\xfe\xba\xbe":  # universal (fat) Mach-O: big-endian header
        (n,) = struct.unpack_from(">I", data, 4)
        cpus = {_MACHO_CPUS.get(struct.unpack_from(">I", data, 8 + 20 * i)[0], "?")
                for i in range(min(n, 8))}
        return "Mach-O", cpus
    if data[:2] == b"MZ" and len(data) >= 0x40:
        (pe,) = struct.unpack_from("<I", data, 0x3C)
        if data[pe:pe + 4] == b"PE\0\0":
            (machine,) = struct.unpack_from("<H", data, pe + 4)
            return "PE", {_PE_MACHINES.get(machine, hex(machine))}
    return "unknown", set()


def check(vsix: str, target: str) -> list[str]:
    faults: list[str] = []
    z = zipfile.ZipFile(vsix)
    names = set(z.namelist())
    vsixmanifest = z.read("extension.vsixmanifest").decode("utf-8")
    m = re.search(r'TargetPlatform="([^"]+)"', vsixmanifest)
    if m is None or m.group(1) != target:
        faults.append(f"vsce's manifest names target {m.group(1) if m else None!r}, not "
                      f"{target!r}")
    manifest = json.loads(z.read("extension/bundled/manifest.json"))
    if manifest.get("platform") != target:
        faults.append(f"bundled/manifest.json is for {manifest.get('platform')!r}, not "
                      f"{target!r}")
    versions = list(manifest.get("pythonVersions") or [])
    if not versions:
        faults.append("the bundle carries no CPython version")
    need = [
        "extension/package.json",
        "extension/dist/extension.js",
        "extension/extension/media/turnback.svg",
        "extension/bundled/tool/turnback/server/__main__.py",
        "extension/bundled/tool/turnback/store/facade.py",
        "extension/bundled/libs/common/pygls/__init__.py",
        "extension/bundled/libs/common/lsprotocol/types.py",
    ]
    if target.startswith("linux"):
        need.append("extension/bundled/libs/common/inotify_simple.py")  # the Linux watcher
    elif any("inotify_simple" in n for n in names):
        faults.append("inotify_simple (Linux only) is carried for a non-Linux target")
    tags = {"cp" + v.replace(".", "") for v in versions}
    for tag in sorted(tags):
        need += [f"extension/bundled/libs/{tag}/orjson/__init__.py",
                 f"extension/bundled/libs/{tag}/zstandard/__init__.py",
                 f"extension/bundled/libs/{tag}/blake3/__init__.py"]
    faults += [f"missing {n}" for n in need if n not in names]
    unwanted = [n for n in names if "/node_modules/" in n or "/__pycache__/" in n
                or n.startswith("extension/server/")]
    faults += [f"unwanted {n}" for n in sorted(unwanted)[:5]]
    fmt, cpu = EXPECTED[target]
    compiled = [n for n in names if n.startswith("extension/bundled/libs/")
                and (n.endswith(".so") or n.endswith(".pyd") or ".so." in n)]
    if not compiled:
        faults.append("no compiled module in the bundle (orjson, blake3, zstandard have some)")
    wrong_suffix = ".so" if fmt == "PE" else ".pyd"
    for n in sorted(compiled):
        kind, cpus = binary_kind(z.read(n))
        if kind != fmt or cpu not in cpus:
            faults.append(f"{n} is {kind} for {sorted(cpus)}, not {fmt} for {cpu}")
        if n.endswith(wrong_suffix):
            faults.append(f"{n}: a {wrong_suffix} module does not load on {target}")
        ver = re.search(r"\.(?:cpython-|cp)(3\d+)", n.rsplit("/", 1)[-1])
        if ver and "abi3" not in n and f"cp{ver.group(1)}" not in tags:
            faults.append(f"{n} is built for a CPython the bundle does not carry")
    return faults


def main() -> None:
    vsix, target = sys.argv[1], sys.argv[2]
    if target not in EXPECTED:
        raise SystemExit(f"check_vsix: unknown target {target!r}; known: {', '.join(EXPECTED)}")
    faults = check(vsix, target)
    if faults:
        raise SystemExit(f"{vsix}:\n  " + "\n  ".join(faults))
    z = zipfile.ZipFile(vsix)
    manifest = json.loads(z.read("extension/bundled/manifest.json"))
    left = manifest.get("leftOut") or {}
    print(f"{vsix}: {len(z.namelist())} files; {target}; server for Python "
          f"{', '.join(manifest['pythonVersions'])}"
          + (f"; left out (no wheels): {', '.join(left)}" if left else ""))


if __name__ == "__main__":
    main()
