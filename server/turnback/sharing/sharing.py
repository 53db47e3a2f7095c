"""``turnback push``, ``pull`` and ``remote``: the operations clients call."""

from __future__ import annotations

from ..events import JSON
from ..store.facade import Store
from . import export, transport
from .gitrun import check_remote
from .layout import REF_PREFIX
from .pull import Pulled, pull_machine
from .repo import PULLED, ShareRepo
from .transport import REMOTE_KEY


def push(store: Store, remote: str | None = None, dry_run: bool = False) -> JSON:
    """Send this machine's sessions and checkpoints to ``refs/turnback/<machine>``."""
    repo = ShareRepo(store.root)
    repo.ensure()
    target = transport.resolve(store.workspace, repo, remote)
    built = export.build(store, repo)
    there = transport.remote_refs(repo, target.url).get(built.machine)
    out: JSON = {
        "remote": target.given, "url": target.url, "machine": built.machine,
        "ref": REF_PREFIX + built.machine, "sessions": built.sessions,
        "checkpoints": built.checkpoints, "commit": built.commit, "dryRun": dry_run,
        "redactions": [r.to_json() for r in built.redactions], "objects": 0, "bytes": 0,
        "upToDate": built.commit is None or built.commit == there,
    }
    if out["upToDate"]:
        return out
    assert built.commit is not None
    exclude = [there] if there is not None and repo.has(there) else []
    out["objects"], out["bytes"] = transport.pack_bytes(repo, built.commit, exclude)
    if not dry_run:
        transport.push(repo, target.url, built.commit, built.machine)
    return out


def pull(store: Store, remote: str | None = None) -> JSON:
    """Fetch every other machine's history and take it into the store (read-only)."""
    repo = ShareRepo(store.root)
    repo.ensure()
    target = transport.resolve(store.workspace, repo, remote)
    mine = repo.machine()
    fetched, refused = transport.fetch(repo, target.url)
    results = [pull_machine(store, repo, machine, commit).to_json()
               for machine, commit in sorted(fetched.items()) if machine != mine]
    results += [Pulled(machine, refused=why).to_json() for machine, why in sorted(refused.items())
                if machine != mine]
    return {"remote": target.given, "url": target.url, "machine": mine, "machines": results}


def remote(store: Store, set_to: str | None = None, unset: bool = False,
           look: bool = True) -> JSON:
    """Which remote history goes to, and (``look``) what each machine has there."""
    repo = ShareRepo(store.root)
    repo.ensure()
    if set_to is not None:
        check_remote(set_to)
        repo.set_config(REMOTE_KEY, set_to)
    if unset:
        repo.set_config(REMOTE_KEY, None)
    out: JSON = {"machine": repo.machine(), "historyRemote": repo.config(REMOTE_KEY)}
    try:
        target = transport.resolve(store.workspace, repo, None)
    except Exception as exc:  # no remote yet: say so, the rest still answers
        out.update(remote=None, url=None, problem=getattr(exc, "message", str(exc)))
        return out
    out.update(remote=target.given, url=target.url, why=target.why)
    pulled = repo.refs(PULLED)
    if look:
        there = transport.remote_refs(repo, target.url)
        out["machines"] = [{"machine": m, "commit": c, "mine": m == out["machine"],
                            "pulled": pulled.get(m) == c} for m, c in sorted(there.items())]
    return out
