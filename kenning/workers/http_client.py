"""httpx, without its command line: every kenning module that uses httpx imports it from here.

httpx (0.28 and 0.29, the newest) imports its `httpx` command's module with its package,
and that module imports click, rich and pygments whenever they are installed, which they
are wherever kenning is (its `ken` command uses click and rich): about 60 ms of CPU and
5 MB on every daemon start, for a command the daemon never runs. httpx2 made that import
lazy (pydantic/httpx2#947); httpx has not. A `None` in `sys.modules` makes importing
`httpx._main` fail, and httpx then takes the path it has for an install without its
`[cli]` extra (its own `httpx.main` says to install it); nothing else changes. Set only
if httpx has not loaded it already, so a process that did keeps its command.

The ollama client imports httpx too: the modules that use it import this one first.
"""

import sys

sys.modules.setdefault("httpx._main", None)

import httpx  # noqa: E402  (after the line above, which is the point of this module)

__all__ = ["httpx"]
