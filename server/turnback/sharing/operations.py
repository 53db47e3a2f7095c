"""``turnback push``, ``pull`` and ``remote``: the operations clients call. One at a time
per store (``ShareRepo.lock``): a push, a forgetting push and a pull never interleave."""

from __future__ import annotations

from ..errors import InvalidInput
from ..events import JSON, is_id
from ..store.facade import Store
from . import export, transport
from .gitrun import check_remote
from .layout import REF_PREFIX
from .pull import Pulled, pull_machine
from .repo import CHAIN_REF, LOCAL_REF, PULLED, REWRITTEN_KEY, ShareRepo
from .transport import REMOTE_KEY


def push(store: Store, remote: str | None = None, dry_run: bool = False,
         forget: list[str] | None = None) -> JSON:
    """Send this machine's sessions and checkpoints to ``refs/turnback/<machine>``.

    ``forget``: sessions (this machine's ids) never to be pushed again; this push replaces
    the machine's history on the remote by one without them (and their checkpoints)."""
    repo = ShareRepo(store.root)
    repo.ensure()
    with repo.lock():
        target = transport.resolve(store.workspace, repo, remote)
        if forget and dry_run:
            raise InvalidInput("--forget replaces the machine's history on the remote and "
                               "has no dry run; run it without --dry-run")
        for sid in forget or []:
            if not is_id(sid) or "@" in sid:
                raise InvalidInput(f"{sid[:80]!r} is not a session id of this machine")
            if not dry_run:
                repo.forget(sid)
        if forget and not dry_run:
            repo.set_config(REWRITTEN_KEY, "true")
        rewrite = bool(forget) or repo.config(REWRITTEN_KEY) is not None
        if rewrite and not dry_run:
            repo.set_ref(LOCAL_REF, None)
            repo.set_ref(CHAIN_REF, None)
            repo.drop_map(("c", "C"))
        built = export.build(store, repo, fresh=rewrite and not dry_run)
        repo.add_redactions([r.to_json() for r in built.redactions])
        there = transport.remote_refs(repo, target.url).get(built.machine)
        out: JSON = {
            "remote": target.given, "url": target.url, "machine": built.machine,
            "ref": REF_PREFIX + built.machine, "sessions": built.sessions,
            "checkpoints": built.checkpoints, "newCheckpoints": built.new_checkpoints,
            "commit": built.commit, "dryRun": dry_run, "replaces": rewrite,
            "forgotten": sorted(repo.forgotten() | set(forget or [])),
            # what this push sends redacted: converted by it or by a dry run before it
            "redactions": repo.unsent_redactions(), "objects": 0, "bytes": 0,
            "upToDate": built.commit is None or built.commit == there,
        }
        if out["upToDate"]:
            repo.set_config(REWRITTEN_KEY, None)
            if not dry_run:
                repo.mark_redactions_sent()
            out["redactions"] = []
            return out
        assert built.commit is not None
        exclude = [there] if there is not None and repo.has(there) else []
        if dry_run:
            out["objects"], out["bytes"] = transport.pack_bytes(repo, built.commit, exclude)
            return out
        out["objects"], out["bytes"] = transport.push(
            repo, target.url, built.commit, built.machine, exclude,
            lease=there if rewrite else None, replace=rewrite)
        repo.set_config(REWRITTEN_KEY, None)
        repo.mark_redactions_sent()
        return out


def delete(store: Store, remote: str | None = None) -> JSON:
    """Take this machine's whole history off the remote (its ref); a later push sends it
    all again as a new chain (forgotten sessions still left out)."""
    repo = ShareRepo(store.root)
    repo.ensure()
    with repo.lock():
        target = transport.resolve(store.workspace, repo, remote)
        machine = repo.machine()
        there = transport.remote_refs(repo, target.url).get(machine)
        if there is not None:
            transport.delete(repo, target.url, machine, there)
        repo.set_ref(LOCAL_REF, None)
        repo.set_ref(CHAIN_REF, None)
        repo.drop_map(("c", "C"))
        repo.set_config(REWRITTEN_KEY, None)
        repo.mark_redactions_sent(everything=False)  # the next push sends it all again
        return {"remote": target.given, "url": target.url, "machine": machine,
                "ref": REF_PREFIX + machine, "deleted": there is not None}


def pull(store: Store, remote: str | None = None) -> JSON:
    """Fetch every other machine's history and take it into the store (read-only)."""
    repo = ShareRepo(store.root)
    repo.ensure()
    with repo.lock():
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
