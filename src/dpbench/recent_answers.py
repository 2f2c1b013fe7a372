"""A bounded memory of a pure function's last answers, kept in the process (nothing is written)."""

from __future__ import annotations

from typing import Any


class RecentAnswers:
    """The last ``size`` answers by key, the oldest forgotten first. Only for answers that are a function of the key
    alone (a budget and an accountant's configuration, a validation set's bytes, a dataset's checksum and its fold
    settings), so that remembering one never changes a result."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._answers: dict[Any, Any] = {}

    def __contains__(self, key: Any) -> bool:
        return key is not None and key in self._answers

    def __getitem__(self, key: Any) -> Any:
        return self._answers[key]

    def __len__(self) -> int:
        return len(self._answers)

    def remember(self, key: Any, answer: Any) -> Any:
        """Keep ``answer`` under ``key`` (nothing for key None) and return it."""
        if key is not None:
            if len(self._answers) >= self._size:
                del self._answers[next(iter(self._answers))]
            self._answers[key] = answer
        return answer
