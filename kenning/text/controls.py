"""Characters that break a line of text: C0 and C1 controls and the Unicode line and
paragraph separators. A title, a path or a snippet shown on one line must hold none of
them as they are: the CLI escapes them, and `documents.add` refuses a title with one."""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
