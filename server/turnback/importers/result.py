"""What an import did: sessions touched, events and checkpoints added, problems met."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..events import JSON
from ..models import Problem

# A damaged 100 MB file could report a problem per line; keep the first ones
# (enough to act on) and count the rest, so memory stays bounded.
MAX_PROBLEMS = 500


@dataclass(slots=True)
class ImportResult:
    sessions: list[str] = field(default_factory=list)  # every session the input holds
    events: int = 0  # events added (already-present ids are not counted)
    checkpoints: int = 0  # checkpoints added
    problems: list[Problem] = field(default_factory=list)
    problems_omitted: int = 0
    prompted: list[str] = field(default_factory=list)  # sessions that got a new user prompt
    files: int = 0  # input files read
    ended: list[str] = field(default_factory=list)  # sessions whose agent turn ended

    def add_problem(self, problem: Problem) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)
        else:
            self.problems_omitted += 1

    def add_session(self, session_id: str) -> None:
        if session_id not in self.sessions:
            self.sessions.append(session_id)

    def add_prompted(self, session_id: str) -> None:
        if session_id not in self.prompted:
            self.prompted.append(session_id)

    def add_ended(self, session_id: str) -> None:
        if session_id not in self.ended:
            self.ended.append(session_id)

    def to_json(self) -> JSON:
        return {
            "sessions": self.sessions,
            "events": self.events,
            "checkpoints": self.checkpoints,
            "problems": [p.to_json() for p in self.problems],
            "problemsOmitted": self.problems_omitted,
            "prompted": self.prompted,
            "files": self.files,
        }
