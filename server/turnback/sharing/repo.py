"""The store's private bare git repository, ``<store>/share/git``: where pushes are built
and pulls land before they are checked. It also keeps this store's machine id, the chosen
history remote, the memory of which Turnback object became which git object (so a
push after 100 more turns converts only what is new), and what the conversions redacted
(so every dry run lists what the next push sends redacted, not only what it converted).
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import orjson

from ..errors import Unsafe
from ..fs import instore, privacy
from ..fs.locks import rw_lock
from ..fs.reading import open_append, open_regular, read_regular
from ..fs.walk import walk
from .gitrun import out, run
from .layout import is_machine, new_machine_id

LOCAL_REF = "refs/turnback-local/chain"  # the last push commit built here (the next's parent)
CHAIN_REF = "refs/turnback-local/checkpoints"  # the tip of this machine's checkpoint chain
SCRATCH_REF = "refs/turnback-local/building"  # fast-import's, while it writes checkpoints
FORGOTTEN_KEY = "turnback.forgotten"  # sessions never pushed again (git config, one a value)
REWRITTEN_KEY = "turnback.rewritten"  # set: the next push replaces the remote's chain
SENT_KEY = "turnback.redactionsSent"  # how many lines of share/redactions a push has sent
MAX_REDACTIONS_READ = 16 << 20  # bytes of share/redactions read at most
MAX_MAP_READ = 1 << 32  # bytes of share/objmap read at most (about 100 bytes an object)
PULLED = "refs/turnback-pulled/"  # what the last pull fetched, per machine
IMPORTED = "refs/turnback-imported/"
# what ``git init --bare`` writes in a repository's own configuration (and Turnback's
# ``turnback.*`` keys beside them): anything else there is refused (``_check_config``)
_OWN_KEYS = frozenset({
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.sharedrepository",
    "core.logallrefupdates", "core.ignorecase", "core.precomposeunicode", "core.symlinks",
    "receive.denynonfastforwards",
})  # the commit of each machine already in the store


class ShareRepo:
    def __init__(self, store_root: Path) -> None:
        self.folder = store_root / "share"
        self.git_dir = self.folder / "git"
        self.map_path = self.folder / "objmap"

    def ensure(self) -> None:
        self._refuse_swapped()
        if (self.git_dir / "HEAD").exists():
            self._refuse_links()
            self._check_config()
            return
        instore.unlink(self.map_path)  # it names objects of a repository now gone
        if not self.folder.exists():
            privacy.make_dir(self.folder)
        # 0600 files, 0700 folders, as every store file: it holds the workspace's contents
        self._refuse_swapped()
        run(["init", "--quiet", "--bare", "--shared=0600", str(self.git_dir)],
            what="git init (the store's sharing repository)")

    def _refuse_swapped(self) -> None:
        """Refuse ``share/`` or ``share/git`` swapped for a link since the store was opened
        (``LinkedInStore``, naming it): git runs on the path and would write the workspace's
        contents, refs and config in the folder the link names. A store the user named is
        not checked (``fs/instore.py``). A swap between this look and git's run is not
        caught: git takes no folder descriptor."""
        try:
            folder = instore.folder_of(self.git_dir / "HEAD", create=False)
        except FileNotFoundError:
            return  # no repository yet (a dangling link is ELOOP, refused above)
        if folder is not None:
            folder.close()

    def _refuse_links(self) -> None:
        """Refuse a repository holding a symbolic link (git makes none in it): a copied
        store's ``share/git/objects -> elsewhere`` would have git write the workspace's
        contents there (the store's own check looks one level into ``share/`` only)."""
        for folder, dirs, files in walk(self.git_dir):
            for name in (*dirs, *files):
                path = os.path.join(folder, name)
                if os.path.islink(path):
                    raise Unsafe(f"the store's sharing repository holds a symbolic link, {path}"
                                 "; git makes none there and Turnback runs no git through "
                                 f"one: delete {self.folder} (this machine then pushes under "
                                 "a new machine id) and try again")

    def _check_config(self) -> None:
        """Refuse a repository whose own configuration holds anything Turnback does not
        write. A store can come from elsewhere (a repository that commits its ``.turnback``,
        a synced folder), and git runs what its configuration says: a ``url.<ext::sh -c
        ...>.insteadOf`` with ``protocol.ext.allow``, a ``core.sshCommand``, a credential
        helper, an ``include.path`` would run a command at the next push or pull. git
        itself says what it reads there (``--local --includes``: the files it includes too)."""
        text = run(["config", "--local", "--includes", "--list", "-z"], git_dir=self.git_dir,
                   what="git config (the store's sharing repository)").stdout
        for entry in text.split(b"\0"):
            if not entry:
                continue
            key = entry.partition(b"\n")[0].decode("utf-8", "replace")
            if key not in _OWN_KEYS and not key.startswith("turnback."):
                raise Unsafe(
                    f"{self.git_dir / 'config'} sets {key[:200]!r}, which Turnback never "
                    "writes there (a store copied from elsewhere can run commands through "
                    f"git's configuration): nothing was run; delete {self.folder} (this "
                    "machine then pushes under a new machine id) and try again")

    def config(self, key: str) -> str | None:
        proc = run(["config", "--get", key], git_dir=self.git_dir, check=False)
        value = proc.stdout.decode("utf-8", "replace").strip()
        return value if proc.returncode == 0 and value else None

    def set_config(self, key: str, value: str | None) -> None:
        if value is None:
            run(["config", "--unset", key], git_dir=self.git_dir, check=False)
        else:
            run(["config", key, value], git_dir=self.git_dir)

    def machine(self) -> str:
        mid = self.config("turnback.machine")
        if mid is None or not is_machine(mid):
            mid = new_machine_id()
            self.set_config("turnback.machine", mid)
        return mid

    def forgotten(self) -> set[str]:
        proc = run(["config", "--get-all", FORGOTTEN_KEY], git_dir=self.git_dir, check=False)
        return set(proc.stdout.decode("utf-8", "replace").split()) if proc.returncode == 0 \
            else set()

    def forget(self, session_id: str) -> None:
        if session_id not in self.forgotten():
            run(["config", "--add", FORGOTTEN_KEY, session_id], git_dir=self.git_dir)

    def lock(self) -> AbstractContextManager[None]:
        """One push, pull or deletion at a time in this store (processes included)."""
        return rw_lock(self.folder / "lock", exclusive=True)

    def ref(self, name: str) -> str | None:
        proc = run(["rev-parse", "--verify", "--quiet", name + "^{commit}"],
                   git_dir=self.git_dir, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def set_ref(self, name: str, sha: str | None) -> None:
        if sha is None:
            run(["update-ref", "-d", name], git_dir=self.git_dir, check=False)
        else:
            run(["update-ref", name, sha], git_dir=self.git_dir)

    def refs(self, prefix: str) -> dict[str, str]:
        text = out(["for-each-ref", "--format=%(objectname) %(refname)", prefix],
                   git_dir=self.git_dir)
        found = {}
        for line in text.splitlines():
            sha, _, name = line.partition(" ")
            found[name[len(prefix):]] = sha
        return found

    def has(self, sha: str) -> bool:
        return run(["cat-file", "-e", sha], git_dir=self.git_dir, check=False).returncode == 0

    # -- Turnback object -> git object, remembered between pushes ------------------------
    def load_map(self) -> dict[str, str]:
        """What became what: ``t|b|l<turnback hash>`` and ``s<session key>`` -> the git
        object pushed, ``c<checkpoint id>`` -> its commit on this machine's chain,
        ``C<commit>`` -> checkpoints on the chain up to it, ``g<git tree>`` -> ``<turnback
        tree>,<bytes>,<files>`` and ``f<git blob>`` -> ``<turnback blob>`` pulled,
        ``p<git blob>`` -> ``1`` (a session blob already pulled), ``k<commit>`` -> ``1`` (a
        pulled checkpoint commit taken). A damaged line is skipped: it only costs
        converting that object again."""
        found: dict[str, str] = {}
        try:
            # never through a link nor from a FIFO (a store copied from elsewhere may hold
            # either), as every store file is read
            data = read_regular(self.map_path, limit=MAX_MAP_READ)
        except FileNotFoundError:
            return found
        for line in data.split(b"\n"):
            key, _, sha = line.decode("ascii", "replace").partition(" ")
            if key and sha and " " not in sha and len(sha) <= 200:
                found[key] = sha
        return found

    def drop_map(self, prefixes: tuple[str, ...]) -> None:
        """Forget every entry whose key starts with one of ``prefixes`` (a chain replaced)."""
        keep = {k: v for k, v in self.load_map().items() if not k.startswith(prefixes)}
        tmp = self.map_path.with_name("objmap.tmp")
        instore.unlink(tmp)  # these three through no link swapped in (fs/instore.py)
        fd = instore.open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, "".join(f"{k} {v}\n" for k, v in keep.items()).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        instore.rename(tmp, self.map_path)

    def add_map(self, items: dict[str, str]) -> None:
        if not items:
            return
        data = "".join(f"{k} {v}\n" for k, v in items.items()).encode()
        fd = open_append(self.map_path, create=0o600)  # never through a planted link
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    # -- what conversions redacted, and how much of it a push has sent ---------------------
    # share/redactions: one JSON line {where, kind, line} per redaction a conversion made,
    # appended; turnback.redactionsSent: up to which byte of it a push has sent. Content is
    # converted once (the object map), often by a dry run, so the lines after that byte are
    # what the next push sends redacted.

    def add_redactions(self, items: list[dict[str, Any]]) -> None:
        if not items:
            return
        data = b"".join(orjson.dumps(i) + b"\n" for i in items)
        # never through a link: a copied store's ``redactions -> ~/.bashrc`` got these lines
        fd = open_append(self.folder / "redactions", create=0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def unsent_redactions(self) -> list[dict[str, Any]]:
        """The redactions of content converted since the last push, each listed once (at
        most MAX_REDACTIONS_READ bytes of them); a line that does not parse is skipped."""
        sent = self.config(SENT_KEY)
        start = int(sent) if sent is not None and sent.isdigit() else 0
        try:
            fd = open_regular(self.folder / "redactions")  # no link, no FIFO (it blocked)
        except FileNotFoundError:
            return []
        try:
            if start > os.fstat(fd).st_size:
                start = 0  # a file made again since: all of it is unsent
            os.lseek(fd, start, os.SEEK_SET)
            parts: list[bytes] = []
            left = MAX_REDACTIONS_READ
            while left > 0 and (chunk := os.read(fd, left)):
                parts.append(chunk)
                left -= len(chunk)
            data = b"".join(parts)
        finally:
            os.close(fd)
        out: list[dict[str, Any]] = []
        seen = set()
        for line in data.split(b"\n"):
            try:
                item = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not (isinstance(item, dict) and isinstance(item.get("where"), str)
                    and isinstance(item.get("kind"), str) and isinstance(item.get("line"), int)):
                continue
            key = (item["where"], item["kind"], item["line"])
            if key not in seen:
                seen.add(key)
                out.append({"where": key[0], "kind": key[1], "line": key[2]})
        return out

    def mark_redactions_sent(self, everything: bool = True) -> None:
        """A push sent what was converted (``everything``), or nothing of it is on the
        remote any more (a deleted history: the next push sends it all again)."""
        try:
            size = (self.folder / "redactions").stat().st_size if everything else 0
        except FileNotFoundError:
            size = 0
        self.set_config(SENT_KEY, str(size))
