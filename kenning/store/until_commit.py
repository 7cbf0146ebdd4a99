"""What searches read from the library, kept until the writer next commits.

Searches ask the index the same small questions again and again: how many chunks hold a
term (the coverage floor's idf), which entities a word names and what they mention and
relate to (the graph walk), which sources a scope covers. Between two commits none of
these answers can change, so each is kept until the next commit and then dropped: never
stale, only cold while the library is being written.

The version is the database's count of commits, which moves only once a commit has
returned: a read that began before a commit landed may see the old rows, and it is
then used but not kept. (The writer's count of changed rows moves as soon as a statement
runs, before its transaction commits, so it cannot tell an answer read from the old
snapshot from one read from the new.) Once the library has been idle a while (see
store/database.py) they are dropped too, to hand their memory back.

A cache may be asked from the event loop (`get`) and from a reader's own thread
(`get_now`, for work done there in one trip, such as the graph walk), so its entries
are touched under a lock; the reads themselves run outside it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from kenning.store.database import Database

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class UntilCommit(Generic[K, V]):
    """Answers per key, least recently used dropped first once their sizes pass `budget`."""

    def __init__(self, db: Database, budget: int, size: Callable[[V], int]) -> None:
        self.db = db
        self.budget = budget
        self.size = size
        self.version = -1
        self.entries: OrderedDict[K, V] = OrderedDict()
        self.held = 0
        self._lock = threading.Lock()

    async def get(self, keys: list[K], fetch: Callable[[list[K]], Awaitable[dict[K, V]]]) -> dict[K, V]:
        """The answer for every key, in the order asked; `fetch` reads those not kept and
        must answer each of them."""
        version, found, missing = self._kept(keys)
        if missing:
            fetched = await fetch(missing)
            found.update(fetched)
            self._keep_all(version, fetched)
        return {key: found[key] for key in keys}

    def get_now(self, keys: list[K], fetch: Callable[[list[K]], dict[K, V]]) -> dict[K, V]:
        """`get` for a caller on a worker thread, whose `fetch` reads synchronously."""
        version, found, missing = self._kept(keys)
        if missing:
            fetched = fetch(missing)
            found.update(fetched)
            self._keep_all(version, fetched)
        return {key: found[key] for key in keys}

    def _kept(self, keys: list[K]) -> tuple[int, dict[K, V], list[K]]:
        """The commit count now, what is kept for these keys, and the keys missing."""
        with self._lock:
            version = self.db.commits
            if version != self.version:
                self.entries.clear()
                self.held, self.version = 0, version
            found: dict[K, V] = {}
            missing = []
            for key in keys:
                if key in self.entries:
                    self.entries.move_to_end(key)
                    found[key] = self.entries[key]
                else:
                    missing.append(key)
        return version, found, missing

    def _keep_all(self, version: int, fetched: dict[K, V]) -> None:
        with self._lock:
            if self.db.commits == version == self.version:
                for key, value in fetched.items():
                    self._keep(key, value)

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()
            self.held = 0

    def _keep(self, key: K, value: V) -> None:
        if key in self.entries:
            self.held -= self.size(self.entries.pop(key))
        self.entries[key] = value
        self.held += self.size(value)
        while self.held > self.budget and self.entries:
            _, dropped = self.entries.popitem(last=False)
            self.held -= self.size(dropped)


def _one(_value: object) -> int:
    return 1


def cache(db: Database, name: str, budget: int, size: Callable[[V], int] = _one) -> UntilCommit:
    """The database's cache called `name`, made on first use."""
    if name not in db.caches:
        db.caches[name] = UntilCommit(db, budget, size)
    return db.caches[name]
