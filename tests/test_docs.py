"""The docs a newcomer reads first name what exists: docs/ARCHITECTURE.md has a line for
every module of the package and of the extension ("Every module, one line each"), and
names no module there that is gone. The folder list is the architecture only while this
holds; a module added without its line fails here, naming it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADING = "## Every module, one line each"


def _index() -> set[str]:
    """Every ``folder/module`` the section lists, from its folder lines and module bullets."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    listed: set[str] = set()
    folder = ""
    for line in section.splitlines():
        if (m := re.fullmatch(r"`([^`]+/)`", line)):
            folder = m.group(1)
        elif (m := re.match(r"- `([^`]+)`", line)):
            assert folder, f"'{line}' comes before any folder line"
            listed.add(folder + m.group(1))
    return listed


def _modules() -> set[str]:
    found = {str(p.relative_to(ROOT)) for p in (ROOT / "server" / "turnback").rglob("*.py")
             if p.name != "__init__.py" or p.parent.name == "turnback"}
    found |= {str(p.relative_to(ROOT)) for p in (ROOT / "server" / "turnback").rglob("*.c")}
    found |= {str(p.relative_to(ROOT)) for p in (ROOT / "extension" / "src").rglob("*.ts")}
    return found


def test_architecture_names_every_module_and_no_gone_one() -> None:
    listed, modules = _index(), _modules()
    assert len(modules) > 200  # the walk found the package and the extension
    missing = sorted(modules - listed)
    assert not missing, f"docs/ARCHITECTURE.md, '{HEADING}': add a line for {missing}"
    gone = sorted(listed - modules)
    assert not gone, f"docs/ARCHITECTURE.md, '{HEADING}': remove the lines of {gone}"
