"""Credential redaction before text reaches the store.

Every secret found is replaced by ``[REDACTED]`` in place, and no newline is ever added
or removed, so the line ranges that citations carry still point at the right place.
Where the text is an identity (a ledger entry's fields, a capsule's title) the caller
gives a key, and each mark carries the secret's keyed fingerprint, ``[REDACTED:3f9a]``
(service/redaction_key.py says why and how).

From detect-secrets (Yelp's maintained pattern set): the token formats, i.e. the
deny-lists of all its ``RegexBasedDetector`` plugins (AWS, GitHub, GitLab, Slack, Stripe,
JWT, SendGrid, Twilio, PyPI, npm, Azure storage, Discord, Telegram, Mailchimp, Square,
IBM, Cloudant, SoftLayer, Artifactory, passwords in URLs); the key names that make an
assignment secret (its keyword plugin's ``DENYLIST``, plus a few it lacks such as
``token``); and the Shannon-entropy test, with its limit, for random-looking values.
They come from ``secret_formats.py``, a copy written from the installed library, which
tests/test_secret_formats.py checks against it so an upgrade's new formats are not
missed: importing the plugins costs every daemon and parse worker start the library's
whole package and ``requests`` (60-120 ms of CPU each), for a table of regexes. The
entropy sum is the library's ``calculate_shannon_entropy``, written out here for the same
reason (one loop; the test checks it gives the library's figure for the same value).
Its scanner is not used: it runs line by line on Python's backtracking engine (0.6 MB/s
on Python source here, and quadratic in a line's length: 40 KB of ``eyJ`` on one line
takes 0.7 s), and its keyword plugin needs a file name to choose its regexes.

Hand-written, because the library has no equivalent: private-key bodies (its plugin
flags the BEGIN line; the secret is the block under it, and a pasted block may be cut
short: ``_pem_spans``); assignments of secret-named keys in any syntax, JSON, YAML, INI,
.env, code, command-line flags and query strings, with the checks that tell a literal
from a variable, a call, a type or a placeholder (``_assigned_secret``); Authorization
and Bearer credentials; URL signatures (``sig=``); a URL's user and password written
without its scheme (``admin:X@intranet.local/admin``: ``_bare_userinfo``); what no
``name = value`` spells (a flag and its value, ``sshpass -p``, ``mysql -pX``, ``curl -u
user:X``, XML elements, netrc lines: ``_command_line_spans``); secrets said in sentences,
lists and tables ("the wifi password is X", "the root password for db01 was changed to
X", ``**Password:** X``, ``| password | X |``, the cells under a table's Password
column, "I set the admin password to X", "try X as the password", "the webhook secret
(it's X)", "the PIN is 1234", "recovery codes: X Y Z", "Das Passwort lautet X", "mot de
passe : X", "la contraseña es X": ``_prose_spans``); and token formats it has no plugin
for (``_OWN_TOKENS``).
On this interpreter's standard library (bench/redact_speed.py) the forms added after a
red-team pass changed 56 more lines, all of them netrc passwords in test_netrc.py; a
second pass's (a value with more after it on its line, as in connection strings and
logfmt; name/value pairs; YAML blocks; cookies; SQL and PowerShell passwords; crypt
hashes; more token formats; a random value under any name holding "key"; the strings
of an object or list under a secret name; .pgpass lines) 4 more, cookie examples in
http/cookies.py; the sentences none, and 1 of the 564,492 lines of a Debian system's
/usr/share/doc, an example password in curl's docs. A red-team pass on the sentences
(bench/redact_prose.py: hand-written note lines, recall on a split written after the
last rule change 50% before, 85% after, no false positives on its lines about secrets)
changed no more lines of either sample; on 10.9 million lines of installed packages'
code and docs (site-packages, the Cloud SDK, node_modules, CMake's docs) a first
version masked 21 more, all code or API docs read as sentences; the rules now pass over
them, and over 7 the sentences masked before (a backticked name, a `--flag`).
The user and password without a scheme changed 6 more lines of the standard library, all
of them `user:password@host:port` netlocs in urllib's tests, and none of the prose
bench's lines about secrets. A password of plain words before a host on a private
network or a machine's name (`svc:letmein@intranet.local`), and a token that is a path's
segment ending at the next `/`, changed no more lines of either. Nor did a token run into
the word before it (`ownghp_...`, `scAKIA...`: ``_is_glued_token``), on 10.6 million
lines of the standard library, /usr/share/doc and installed packages, or on the prose bench.

Linear time. Every regex, the library's included, runs on RE2 (google-re2), whose
automata take time linear in the text whatever the pattern, so no input can make one
backtrack. RE2 has no look-around and caps counted repetition at 1000, so
``_library_pattern`` drops the library's look-arounds and checks what they asked for on
each match instead, and lowers larger counts (the match is then extended over the rest
of the token). Each regex is one pass over the whole text; matches become byte spans,
merged and written once. Python runs per match, never per character, and every look
past a match is bounded or only moves forward.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

import re2

from kenning.ingest import secret_formats
from kenning.text.redacted import MARK, MARKS, fingerprinted
from kenning.text.unicode import normalized

_MARK = MARK.encode()

Span = tuple[int, int]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


def _re2(pattern: str) -> re2._Regexp:
    return re2.compile(pattern.encode(), _OPTIONS)


# --- library token patterns -------------------------------------------------------------

_LOOKAHEADS = ("(?=", "(?!")
_LOOKBEHINDS = ("(?<=", "(?<!")
_RE2_MAX_REPEAT = 1000
_COUNT = re.compile(r"\{(\d+),(\d+)\}")


@dataclass(frozen=True)
class _TokenPattern:
    regex: re2._Regexp
    # What the library's look-arounds, which RE2 lacks, asked for; checked per match. In
    # its patterns a look-ahead always ends the secret (`(?![a-f0-9])`) and a
    # look-behind always starts the match (`(?<=\W)`).
    ends_token: bool = False
    starts_word: bool = False


def _library_pattern(pattern: str, flags: int) -> _TokenPattern:
    """The library's Python regex on RE2: look-arounds become flags, big counts shrink."""
    if flags & re.VERBOSE and re.search(r"\s|#", pattern):
        raise ValueError(f"cannot translate a verbose pattern to RE2: {pattern!r}")
    source, dropped = _without_lookarounds(pattern)
    source = _COUNT.sub(lambda m: "{%s,%d}" % (m[1], min(int(m[2]), _RE2_MAX_REPEAT)), source)
    inline = ("(?i)" if flags & re.IGNORECASE else "") + "(?m)"
    return _TokenPattern(
        _re2(inline + source),
        ends_token=any(kind in _LOOKAHEADS for kind in dropped),
        starts_word=any(kind in _LOOKBEHINDS for kind in dropped),
    )


def _without_lookarounds(source: str) -> tuple[str, set[str]]:
    out: list[str] = []
    dropped: set[str] = set()
    i, in_class = 0, False
    while i < len(source):
        char = source[i]
        if char == "\\":
            out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(" and source.startswith(_LOOKAHEADS + _LOOKBEHINDS, i):
            dropped.add(source[i : i + 4] if source.startswith(_LOOKBEHINDS, i) else source[i : i + 3])
            i = _group_end(source, i)
            continue
        out.append(char)
        i += 1
    return "".join(out), dropped


def _group_end(source: str, start: int) -> int:
    depth, i, in_class = 0, start, False
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced group in {source!r}")


# Token formats detect-secrets has no plugin for.
_OWN_TOKENS = (
    r"github_pat_[A-Za-z0-9_]{40,255}",
    r"AIza[0-9A-Za-z_-]{35}",
    r"sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    r"xox[abposre]-[A-Za-z0-9-]{10,}",
    r"xapp-\d-[A-Za-z0-9-]{10,}",
    r"hf_[A-Za-z0-9]{30,}",
    r"npm_[A-Za-z0-9]{36}",
    r"ya29\.[0-9A-Za-z_-]{20,}",
    r"GOCSPX-[0-9A-Za-z_-]{20,}",
    r"[sr]k_(?:test|live)_[0-9A-Za-z]{20,}",
    r"whsec_[0-9A-Za-z+/=]{20,}",
    r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}",
    r"do[por]_v1_[0-9a-f]{64}",
    r"hv[sbr]\.[0-9A-Za-z_-]{20,}",
    r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
    # crypt(3) hashes as shadow and htpasswd files keep them (the group is what is masked).
    r"\$2[aby]\$\d\d\$([./A-Za-z0-9]{53})",
    r"\$(?:1|5|6|apr1)\$((?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{16,})",
    r"\$y\$([./A-Za-z0-9]+\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{16,})",
)

_TOKENS = [
    *(_library_pattern(pattern, flags) for _, pattern, flags in secret_formats.TOKEN_PATTERNS),
    *(_TokenPattern(_re2(pattern)) for pattern in _OWN_TOKENS),
]

_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_TOKEN_CHARS = _WORD | frozenset(b"-+/=")
_SEGMENT_CHARS = _TOKEN_CHARS - frozenset(b"/")
_MAX_EXTENSION = 4096
# Token prefixes distinctive enough that a token glued to the word before it is still a
# credential: in 20.4 million lines of real text (the standard library, /usr/share/doc,
# installed packages, the Cloud SDK, node_modules) none of them sits inside a longer word.
# What words and blobs do hold stays skipped there: a bare `sk-` (`task-`, `disk-` in
# slugs: 145 such there), Twilio's `AC`/`SK`, Mailchimp, a JWT's `eyJ`, Discord, Telegram,
# Google's `AIza` and `hf_` (standard base64, common in stored text, holds four given
# letters about once in 50 MB), Stripe's test keys (`flask_test_...`). GitHub's body must
# be base62, as GitHub's are: `ghs_` ends snake_case words (`daily_highs_and_lows_...`).
_GLUED_TOKENS = _re2(
    r"gh[pousr]_[A-Za-z0-9]{36}|github_pat_"
    r"|gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941"
    r"|sk-(?:ant|proj|svcacct|admin)-|sk-[A-Za-z0-9_-]{0,200}T3BlbkFJ|[sr]k_live_"
    r"|xox[abposre]-|xapp-\d-|npm_|pypi-Ag|SG\.|ya29\.|GOCSPX-|whsec_"
    r"|shp(?:at|ss|ca|pa)_|do[por]_v1_|AGE-SECRET-KEY-1"
)
_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_NOT_IN_LOWER_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ+/=")
_MAX_GLUED_WORD = 64


def _token_spans(data: bytes) -> Iterator[Span]:
    for pattern in _TOKENS:
        for match in pattern.regex.finditer(data):
            span = _token_span(data, pattern, match)
            if span is not None:
                yield span


def _token_span(data: bytes, pattern: _TokenPattern, match: re2._Match) -> Span | None:
    if pattern.starts_word and match.start() and data[match.start() - 1] in _WORD:
        return None
    start, end = _secret_in(data, match)
    if start == match.start() and start and data[start - 1] in _WORD and data[start] in _WORD:
        if not _is_glued_token(data, start):
            # A token shape inside a longer word (an identifier, a base64 blob): not a key.
            return None
    if _is_placeholder(data[start:end].decode("utf-8", "replace")):
        return None  # `https://<user>:<password>@host`
    # A token that is a path's segment (`/home/u/<token>/x`) ends at the next slash: the
    # rest of the path is no part of it, and masked with it the path would be lost.
    continuing = _SEGMENT_CHARS if start and data[start - 1] == 0x2F else _TOKEN_CHARS
    if end < len(data) and data[end] in continuing:
        if pattern.ends_token:
            return None
        # A lowered count or a lazy ending stopped short of the token's end (Stripe's
        # newer keys are longer than its pattern): the rest of the token goes too.
        limit = min(len(data), end + _MAX_EXTENSION)
        while end < limit and data[end] in continuing:
            end += 1
    return start, end


def _is_glued_token(data: bytes, start: int) -> bool:
    """Whether the token at `start`, right after a word character, is a credential glued
    to that word (`ownghp_...`, `x_ghp_...`, `mysk-proj-...`) rather than a piece of it.

    Only a prefix no word or blob holds by chance counts (`_GLUED_TOKENS`). An AWS key id
    is upper-case letters and digits, which upper-case base32 and base64 hold (a
    PostScript font's hex, a bundled wasm blob): glued, it counts only after a word with
    no upper-case letter, `+`, `/` or `=` (`scAKIA...`, `key_AKIA...`).
    """
    if _GLUED_TOKENS.match(data, start):
        return True
    if not data.startswith((b"AKIA", b"ASIA"), start):
        return False
    run = start
    limit = max(0, start - _MAX_GLUED_WORD)
    while run > limit and data[run - 1] in _BASE64:
        run -= 1
    return not any(byte in _NOT_IN_LOWER_WORD for byte in data[run:start])


def _secret_in(data: bytes, match: re2._Match) -> Span:
    """The match, or the group in it that holds the secret.

    A group that ends the match's token is the secret (the password in a URL, the value
    of an assignment); a group followed by more of the token is only its prefix ("ghp"
    in "(ghp|gho)_...").
    """
    for group in range(match.re.groups, 0, -1):
        start, end = match.span(group)
        if end > start and not any(char in _TOKEN_CHARS for char in data[end : match.end()]):
            return start, end
    return match.span()


# --- assignments --------------------------------------------------------------------------

# The pattern starts at the secret word, so RE2 can skip ahead to it; the rest of the
# key's name, before that word, is read back by `_key_start`. Counted repetition makes
# RE2's automaton large and slow (15 MB/s instead of 300 here), so lengths are checked
# after the match instead.
_ASSIGNMENT = _re2(
    r"(?i)(?:pass|pwd|[_-]pw|psk|secret|token|key|credential|contrase|auth)[\w.\-\x{80}-\x{10FFFF}]*"
    r"[\"'\]]{0,2}([ \t]*)(:=|=>|=|:)([ \t]*)(\"[^\"\n]*\"?|'[^'\n]*'?|`[^`\n]*`?|[^\s\"'`,;&]+)"
)
# Name characters, and every byte of a non-ASCII one (`contraseña`).
_KEY_BYTES = _WORD | frozenset(b".-") | frozenset(range(128, 256))
_MAX_KEY_PREFIX = 64
# Query parameters that carry a credential under a name no config file would use.
_URL_PARAM = _re2(r"(?i)[?&#;](?:sig|signature|x-amz-signature|x-goog-signature|pw)=([^&#\s\"'<>]+)")
# `Authorization: Bearer <token>`, in headers, curl lines and code.
_AUTHORIZATION = _re2(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"((?:bearer|basic|digest|token|bot|apikey|sso-key|negotiate|ntlm)[ \t]+)?([^\s\"',;]+)"
)
_BEARER = _re2(r"(?i)\bbearer[ \t]+([A-Za-z0-9._~+/=-]{16,})")
# A secret-named flag and its value after a space: `--password hunter3x`, `--api-key X`.
_FLAG = _re2(
    r"(?i)(?:^|[ \t])(--[\w-]*(?:pass|pwd|secret|token|key|credential)[\w-]*)[ \t]+(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`]+)"
)
# Tools that take a password on their command line in a form of their own: `sshpass -p
# X`, `mysql -pX` (`mysql -p db` asks for it), `curl -u user:X`, `docker login -p X`,
# `redis-cli -a X`, `ldapsearch -w X`, `zip -P X`, `7z a -pX`, `smbclient -U user%X`,
# `openssl ... -pass pass:X` or `-k X`, `htpasswd -b file user X`, `echo X | sudo -S`:
# shell history and tool output, which agents archive.
_OPTION_VALUE = r"([^\s\"'-][^\s\"']*)"
_SHORT_FLAGS = r"(?:[ \t]+-[A-Za-z]+)*"
_COMMAND_PASSWORDS = (
    _re2(r"\bsshpass[ \t]+-p[ \t]*([^\s\"']+)"),
    _re2(r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?[ \t]-p" + _OPTION_VALUE),
    _re2(r"\bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t]*[\"']?[^\s:\"']+:([^\s\"'@]+)"),
    _re2(
        r"\b(?:docker|podman|buildah|skopeo|helm(?:[ \t]+registry)?|az)[ \t]+login\b[^\n]*?[ \t]-p[ \t]+" + _OPTION_VALUE
    ),
    _re2(r"\bredis-cli\b[^\n]*?[ \t]-a[ \t]+" + _OPTION_VALUE),
    _re2(r"\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b[^\n]*?[ \t]-w[ \t]*" + _OPTION_VALUE),
    _re2(r"\b(?:un)?zip(?:cloak)?\b[^\n]*?[ \t](?:-P|--password)[ \t]+" + _OPTION_VALUE),
    # 7-Zip's command letter first: `find . -name '*.7z' -print` is no password.
    _re2(r"\b7z[ar]?[ \t]+[adeltux]\b[^\n]*?[ \t]-p" + _OPTION_VALUE),
    _re2(r"\b(?:smbclient|rpcclient|smbmap|smbget)\b[^\n]*?[ \t](?:-U|--user)[ \t=]*[^\s%\"']+%([^\s\"']+)"),
    _re2(r"\bopenssl\b[^\n]*?[ \t]-pass(?:in|out)?[ \t]+pass:([^\s\"']+)"),
    _re2(r"\bopenssl[ \t]+enc\b[^\n]*?[ \t]-k[ \t]+" + _OPTION_VALUE),
    # Batch mode (-b) takes the password after the user, and after the file unless -n
    # prints the line instead.
    _re2(
        r"\bhtpasswd" + _SHORT_FLAGS + r"[ \t]+-[A-Za-z]*(?:n[A-Za-z]*b|b[A-Za-z]*n)[A-Za-z]*" + _SHORT_FLAGS
        + r"[ \t]+[^\s-]\S*[ \t]+" + _OPTION_VALUE
    ),
    _re2(
        r"\bhtpasswd" + _SHORT_FLAGS + r"[ \t]+-[A-Za-z]*b[A-Za-z]*" + _SHORT_FLAGS
        + r"[ \t]+[^\s-]\S*[ \t]+\S+[ \t]+" + _OPTION_VALUE
    ),
    _re2(r"\becho[ \t]+(?:-n[ \t]+)?[\"']?([^\s\"'|]+)[\"']?[ \t]*\|[ \t]*sudo\b[^\n|]*?[ \t]-[A-Za-z]*S\b"),
)
# Windows' `net use`, which takes the password after the share (`net use Z:
# \\srv\share X /user:ann`) or, as written just as often, after the user (`... /user:ann
# X`). `*` asks for it; an option (`/persistent:no`) is none. Judged by `_net_use_password`.
_NET_USE_PASSWORD = r"(\"[^\"\n]+\"|[^\s\"`/*][^\s\"`]*)"
_NET_USE = (
    # The share comes next, or after a device (`Z:`, `LPT1:`, `*`, a batch file's `%DRIVE%`)
    # and options: prose between the two ("net use to map \\srv\share quickly.") had its
    # last word masked.
    _re2(
        r"(?i)\bnet[ \t]+use(?:[ \t]+/[^\s/]\S*)*(?:[ \t]+(?:[a-z][a-z0-9]{0,3}:|\*|%[^%\s]+%|![^!\s]+!))?"
        r"(?:[ \t]+/[^\s/]\S*)*[ \t]+(?:\\\\[^\s\"\\]+\\[^\s\"]+|\"\\\\[^\"\n]+\")[ \t]+" + _NET_USE_PASSWORD
    ),
    _re2(r"(?i)\bnet[ \t]+use\b[^\n]*?[ \t]/u(?:ser)?:(?:\"[^\"\n]*\"|[^\s\"]+)[ \t]+" + _NET_USE_PASSWORD),
)
# What may follow the password on its line: another option, the end of a command or of a
# code span, a redirection (`<nul`, which keeps it from prompting). Prose goes on in words
# ("net use \\srv\share to map it").
_AFTER_NET_USE = frozenset(b"\r\n/&|;<>)^`'\"")
# The syntax's own word for it, as documentation writes the command.
_PASSWORD_WORDS = frozenset({"password", "passwd", "pass", "pwd"})
# The answers `net use` takes (`/persistent:yes`, written apart; yes or no to its
# prompt): `net use Z: \\srv\share yes` had "yes" masked as its password.
_NET_USE_ANSWERS = frozenset({"yes", "no"})
# A legacy HashiCorp Vault service token, `s.` and 24 base62 characters: by its shape
# alone a word in a sentence (`s.AbstractFactoryProvider`), so only where Vault is named
# as taking it: `VAULT_TOKEN=`, an `X-Vault-Token:` header, `vault login s.X`, "the vault
# token is s.X". (The `hvs.` tokens that replaced them are in `_OWN_TOKENS`.)
_VAULT_TOKEN = _re2(
    r"(?i)(?:vault[ \t_-]?token[\"'\]]{0,2}(?:[ \t]+(?:is|was))?(?:[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)"
    r"|\bvault[ \t]+login\b[^\n]*?[ \t](?:token=)?)[\"'`]?((?-i:s)\.[A-Za-z0-9]{24})"
)
# `<password>X</password>` in XML and its kin.
_ELEMENT = _re2(
    r"(?i)<([\w:.-]*(?:pass|pwd|secret|token|key|credential)[\w:.-]*)>([^<\n]+)</([\w:.-]+)>"
)
# A URL's password with no user before it: `redis://:pw@host`.
_URL_EMPTY_USER = _re2(r"(?i)\b[a-z][a-z0-9+.-]*://:([^@\s/]+)@")
# A URL's user and password with no scheme before them: `admin:S3cret!@intranet.local/admin`
# (the library's pattern needs the `://`). A password of words alone (`ann.lee`) is an
# email's local part after a word and a colon (`contact:ann.lee@example.com`) unless
# the rest reads as a URL: an IP host, a port or a path (`admin:admin@192.168.1.1`). The
# patterns tell the two apart, so a line of `a:b@c.de` is no match at all; what they
# match is judged by `_bare_userinfo`.
_USER = r"([A-Za-z0-9._~%+-]+)"
_PASSWORD_CHAR = r"[^\s:/@\"'<>`\[\]]"
# A digit, a symbol or mixed case somewhere in it.
_STRONG_MARK = r"(?:[^\sA-Za-z._+\-:/@\"'<>`\[\]]|[a-z][A-Z]|[A-Z][A-Z][a-z])"
_STRONG_PASSWORD = rf"({_PASSWORD_CHAR}*{_STRONG_MARK}{_PASSWORD_CHAR}*)"
_ANY_HOST = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*)(:[0-9]+)?"
_URL_HOST = r"(\[[0-9A-Fa-f:.]+\]|[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+|[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]+|/))"
_BARE_USERINFO = _re2(rf"{_USER}:{_STRONG_PASSWORD}@{_ANY_HOST}")
_BARE_USERINFO_URL = _re2(rf"{_USER}:({_PASSWORD_CHAR}+)@{_URL_HOST}")
# A password of words alone before a host that receives no mail: a name on a private
# network (`svc:letmein@intranet.local`, RFC 6762's `.local`, RFC 8375's `home.arpa`,
# the `.lan`, `.internal` and `.corp` of company networks) or a machine's name, letters
# then a number (`db01.example.com`, `nas-2.example.org`). An address's domain is neither.
_BARE_USERINFO_MACHINE = _re2(rf"{_USER}:({_PASSWORD_CHAR}+)@([A-Za-z0-9][A-Za-z0-9.-]*)")
_PRIVATE_TOP_LABELS = frozenset(b"local lan internal intranet corp home arpa localdomain localhost intra".split())
_MACHINE_LABEL = re.compile(rb"[A-Za-z]+-?[0-9]+")
# What may stand right before such a user: a space, a quote, a bracket, `=` (`DSN=...`).
# After `/` it is a URL's, the library's to find; after `@` a Matrix id (`@ann:server`).
_BEFORE_USERINFO = frozenset(b" \t\r\n\"'`([{<,;=>|")
# A scheme with no `//` (`mailto:ann@example.com`, `xmpp:`) and the header fields an
# address is written after (`To:ann@example.com`) are not a user.
_NOT_USERS = frozenset(
    b"""mailto xmpp sip sips tel im pres acct jabber matrix news email e-mail mail from to cc bcc
    reply-to sender author maintainer contact by""".split()
)
_HOST_LABEL = re.compile(rb"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_TOP_LABEL = re.compile(rb"[A-Za-z]{2,63}")
_IPV4 = re.compile(rb"(?:\d{1,3}\.){3}\d{1,3}")
# SQL: `CREATE USER u WITH PASSWORD 'x'`, `IDENTIFIED BY 'x'`; PowerShell's
# `ConvertTo-SecureString "x" -AsPlainText`.
_QUOTED_AFTER = _re2(
    r"(?i)\b(?:password|identified\s+by)\s+'([^'\n]+)'"
    r"|\bconvertto-securestring\s+(?:-string\s+)?[\"']([^\"'\n]+)[\"']"
)
# A secret given as a name and a value: `{"name": "DB_PASSWORD", "value": "x"}`, a
# Kubernetes `- name: DB_PASSWORD` / `value: x`, a HAR header, .NET's `<add
# key="DbPassword" value="x"/>`.
_NAME_VALUE = _re2(
    r"(?i)[\"']?\b(?:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?([\w.-]+)[\"']?[ \t]*,?[ \t]*\n?[ \t]*-?[ \t]*"
    r"[\"']?value[\"']?[ \t]*[:=][ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s\"',}]+))"
)
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})
# A cookie header's value: sessions.
_COOKIE = _re2(r"(?im)^[ \t]*(?:cookie|set-cookie)[ \t]*:[ \t]*([^\n]+)")
# A YAML block scalar under a secret name: `password: |` and the lines indented below it.
_BLOCK = _re2(r"(?m)^([ \t]*)([\w.-]*(?:pass|pwd|secret|token|key|credential)[\w.-]*):[ \t]*[|>][-+0-9]*[ \t]*$")
# A secret name whose value is an object or a list: `"secret": {"value": "x"}`,
# `"apiKeys": ["x", "y"]`; its string values are the secrets.
_NESTED = _re2(r"(?i)[\"']([\w.-]*(?:pass|pwd|secret|token|key|credential)[\w.-]*)[\"'][ \t]*:[ \t]*([\[{])")
_JSON_TOKEN = re.compile(rb'"((?:[^"\\\n]|\\.)*)"|[\[\]{}]')
# How far an object or list under a secret name is read.
_MAX_NESTED_BYTES = 16 * 1024
# .pgpass: `host:port:database:user:password`.
_PGPASS = _re2(r"(?m)^[\w.*-]+:(?:\d+|\*):[\w.*-]+:[\w.*@-]+:(\S+)$")
# netrc: `machine host login me password X`, or `password X` alone on its line.
_NETRC = (
    _re2(r"(?im)^[ \t]*(?:machine|default)\b[^\n]*?[ \t]password[ \t]+(\S+)"),
    _re2(r"(?im)^[ \t]*password[ \t]+(\S+)[ \t]*$"),
)

_SECRET_NAME = re.compile(
    "(?:"
    + "|".join(
        (
            *secret_formats.KEYWORDS,
            "token",
            "credentials?",
            "passphrase",
            "psk",
            "(?:access|app|master|encryption|signing|session|shared|consumer|subscription|deploy|webhook)_?key",
        )
    )
    + ")s?"
)
# Names that are about a secret without holding one: `token_type = "bearer"`,
# `password_hint: ...`, `SECRET_KEY_FILE=/run/secrets/key`.
_NOT_SECRET_SUFFIXES = frozenset(
    """type types name names field fields label len length count size file files filename path dir
    url uri endpoint prompt hint help policy format kind expiry expires expiration ttl timeout lifetime
    age mode required enabled disabled min max regex pattern error errors message msg class cls
    validator validators header env var version index idx num number info manager store backend
    provider strategy method scheme algorithm location source id ids column attr input form widget
    template placeholder reset state status""".split()
)
# In a URL, short names are credentials: `?key=`, `&pass=`, `&auth=`.
_URL_SECRET_NAMES = frozenset({"key", "apikey", "pass", "pw", "pwd", "auth", "token"})
# Secret only as the whole name: docker's and npm's `auth`, not `SERVER_AUTH` or `auth_hdr`;
# `pass: hunter6x`, not `bypass`.
_WHOLE_SECRET_NAMES = frozenset({"auth", "pass"})
# A name run together with what it is for ends with one of these: `PGPASSWORD`,
# `adminpassword`, `csrftoken`.
_SECRET_ENDINGS = ("password", "passwd", "secret", "token")
_NOT_VALUES = frozenset(
    "none null nil true false undefined str string bytes int bool boolean float any object optional "
    "required self this bearer basic".split()
)
_TOKEN_LIKE = re.compile(r"[A-Za-z0-9+/=_\-]{20,4096}")
# Another `name=` after a value and a space, as in logfmt and connection strings.
_NEXT_FIELD = re.compile(rb"[ \t]+[\w.-]+=")
_IDENTIFIER = re.compile(r"[A-Za-z_]+")
_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}")
_LOWER = frozenset(b"abcdefghijklmnopqrstuvwxyz")
_QUOTES = (b'"', b"'", b"`")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_AFTER_BARE_VALUE = frozenset(b"\n\r,;&}])#'\"")
_PLACEHOLDER_STARTS = ("$", "%", "<", "{{", "#{", "@")
_MASKED_CHARS = frozenset("*xX•.")
_FORMAT_FIELD = re.compile(r"\{[^{}]*\}|%[sdr]")


def _assignment_spans(data: bytes) -> Iterator[Span]:
    for match in _ASSIGNMENT.finditer(data):
        span = _assigned_secret(data, match)
        if span is not None:
            yield span
    for match in _URL_PARAM.finditer(data):
        start, end = match.span(1)
        end = _closed_outside(data, start, end)
        if _is_quoted_secret(data[start:end].decode("utf-8", "replace")):
            yield start, end
    for match in _AUTHORIZATION.finditer(data):
        value = match.group(2).decode("utf-8", "replace")
        if _is_placeholder(value) or _has_code(value) or not any(char.isalnum() for char in value):
            continue
        # Without a scheme word the value must look like a credential, not the start of
        # a sentence ("Authorization: the server checks ...").
        if match.group(1) or (_ends_value(data, match.end()) and not _IDENTIFIER.fullmatch(value)):
            yield match.span(2)
    for match in _BEARER.finditer(data):
        if _has_digit(match.group(1).decode("ascii")):
            yield match.span(1)
    yield from _command_line_spans(data)


def _bare_userinfo(data: bytes, match: re2._Match, shape: str) -> bool:
    """Whether a match of `_BARE_USERINFO` (`shape` "any"), `_BARE_USERINFO_URL` ("url")
    or `_BARE_USERINFO_MACHINE` ("machine") is a credential: the user starts a word and
    is no scheme or header name, the password is no placeholder and no time
    (`10:30@home`), and the host is an IP address, has a port, or is a hostname with a
    top-level label (`intranet.local`); for "machine", a private or a machine's name."""
    start = match.start(1)
    if start and data[start - 1] not in _BEFORE_USERINFO:
        return False
    user, password = match.group(1).lower(), match.group(2)
    if user in _NOT_USERS or (user.isdigit() and password.isdigit()):
        return False
    text = password.decode("utf-8", "replace")
    if _is_placeholder(text) or not any(char.isalnum() for char in text):
        return False
    if shape == "url":
        return True
    host = match.group(3).rstrip(b".-")
    if shape == "machine":
        labels = host.split(b".")
        machine = labels[-1].lower() in _PRIVATE_TOP_LABELS or _MACHINE_LABEL.fullmatch(labels[0]) is not None
        return machine and len(labels) > 1 and all(_HOST_LABEL.fullmatch(label) for label in labels)
    if host[:1] == b"[" or match.start(4) >= 0 or _IPV4.fullmatch(host):
        return True
    labels = host.split(b".")
    return len(labels) > 1 and _TOP_LABEL.fullmatch(labels[-1]) is not None and all(
        _HOST_LABEL.fullmatch(label) for label in labels
    )


def _nested_values(data: bytes, opening: int) -> tuple[list[Span], int]:
    """The string values (not the keys) inside the object or list opening at `opening`,
    up to its closing bracket or _MAX_NESTED_BYTES, and where the reading stopped. One
    regex finds each next string or bracket, so Python runs per token, not per byte."""
    spans: list[Span] = []
    depth, position = 0, opening
    limit = min(len(data), opening + _MAX_NESTED_BYTES)
    while (found := _JSON_TOKEN.search(data, position, limit)) is not None:
        position = found.end()
        token = found.group()
        if token[:1] == b'"':
            after = data[position : position + 64].lstrip(b" \t\r\n")
            if not after.startswith(b":") and _is_quoted_secret(found.group(1).decode("utf-8", "replace")):
                spans.append(found.span(1))
        elif token in (b"{", b"["):
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                break
    return spans, max(position, opening + 1)


def _indented_below(data: bytes, start: int, indent: int) -> Iterator[Span]:
    """The lines after `start` indented deeper than `indent`: a YAML block's body."""
    position = data.find(b"\n", start)
    limit = min(len(data), start + _MAX_KEY_BYTES)
    while 0 <= position < limit:
        begin = position + 1
        end = data.find(b"\n", begin)
        end = len(data) if end < 0 else end
        line = data[begin:end]
        if line.strip() and len(line) - len(line.lstrip(b" \t")) <= indent:
            return
        if line.strip():
            yield begin + len(line) - len(line.lstrip(b" \t")), end
        position = end if end < len(data) else -1


def _net_use_spans(data: bytes) -> Iterator[Span]:
    for pattern in _NET_USE:
        for match in pattern.finditer(data):
            start, end = match.span(1)
            after = match.end()
            if data[start : start + 1] == b'"':
                start, end = start + 1, end - 1
            elif (cut := _redirected(data[start:end])) is not None:
                # cmd ends the word at a redirection, a pipe or `&`: what comes before is
                # the password, if anything does (`2>nul` names stderr, none).
                if cut == 0:
                    continue
                end = after = start + cut
            if _net_use_password(data, start, end, after):
                yield start, end


# Where cmd ends a word: not at one `^` escapes, which is the word's own (`Zq8^&Wv3` is
# the password `Zq8&Wv3`, and was masked up to the `&`). (`^^&` ends it, and is taken
# for escaped: the word is masked whole, which errs the safe way.)
_CMD_CUT = re.compile(rb"(?<!\^)[<>|&]")


def _redirected(word: bytes) -> int | None:
    """Where cmd ends an unquoted word at `<`, `>`, `|` or `&`: 0 when no password comes
    before it (`>nul`, `2>nul`), None when the word holds none of them."""
    if (found := _CMD_CUT.search(word)) is None:
        return None
    cut = found.start()
    return 0 if cut == 0 or (cut == 1 and word[:1].isdigit() and word[1:2] in b"<>") else cut


def _net_use_password(data: bytes, start: int, end: int, after: int) -> bool:
    """Whether what follows a `net use` share or user is its password: a value that ends
    the command or comes before another option, and is no placeholder."""
    while after < len(data) and data[after] in b" \t":
        after += 1
    redirect = data[after : after + 1].isdigit() and data[after + 1 : after + 2] in (b"<", b">")
    if after < len(data) and data[after] not in _AFTER_NET_USE and not redirect:
        return False
    value = data[start:end].decode("utf-8", "replace")
    word = value.strip("[]<>{}").lower()
    return word not in _PASSWORD_WORDS and word not in _NET_USE_ANSWERS and _is_quoted_secret(value)


def _command_line_spans(data: bytes) -> Iterator[Span]:
    """Secrets that no `name = value` spells: flags followed by a value, the password
    options of common tools, XML elements and netrc lines."""
    yield from _net_use_spans(data)
    for match in _VAULT_TOKEN.finditer(data):
        if match.end() == len(data) or data[match.end()] not in _WORD:
            yield match.span(1)
    for match in _FLAG.finditer(data):
        name = match.group(1).decode("utf-8", "replace").lstrip("-")
        start, end = match.span(2)
        value = data[start:end].decode("utf-8", "replace")
        if value[:1] in "\"'":
            start, end, value = start + 1, end - 1, value[1:-1]
        if not name.lower().startswith("no-") and _is_secret_name(name, False) and _is_quoted_secret(value):
            yield start, end
    for pattern in _COMMAND_PASSWORDS:
        for match in pattern.finditer(data):
            if _is_quoted_secret(match.group(1).decode("utf-8", "replace")):
                yield match.span(1)
    for match in _ELEMENT.finditer(data):
        name = match.group(1).decode("utf-8", "replace")
        value = match.group(2).decode("utf-8", "replace")
        if match.group(3) == match.group(1) and _is_secret_name(name.rsplit(":", 1)[-1], False):
            if _is_quoted_secret(value.strip()):
                yield match.span(2)
    for match in _URL_EMPTY_USER.finditer(data):
        if _is_quoted_secret(match.group(1).decode("utf-8", "replace")):
            yield match.span(1)
    for pattern, shape in ((_BARE_USERINFO, "any"), (_BARE_USERINFO_URL, "url"), (_BARE_USERINFO_MACHINE, "machine")):
        for match in pattern.finditer(data):
            if _bare_userinfo(data, match, shape):
                yield match.span(2)
    for match in _QUOTED_AFTER.finditer(data):
        group = 1 if match.start(1) >= 0 else 2
        if _is_quoted_secret(match.group(group).decode("utf-8", "replace")):
            yield match.span(group)
    for match in _NAME_VALUE.finditer(data):
        name = match.group(1).decode("utf-8", "replace")
        if name.lower() in _SECRET_HEADERS or _is_secret_name(name, False):
            group = next(g for g in (2, 3, 4) if match.start(g) >= 0)
            if _is_quoted_secret(match.group(group).decode("utf-8", "replace")):
                yield match.span(group)
    for match in _COOKIE.finditer(data):
        yield match.span(1)
    covered = 0  # a block inside a block's body is masked with it: each line read once
    for match in _BLOCK.finditer(data):
        if match.start() >= covered and _is_secret_name(match.group(2).decode("utf-8", "replace"), False):
            for span in _indented_below(data, match.end(), len(match.group(1))):
                covered = span[1]
                yield span
    nested_end = 0  # an object inside one already read is not read again: each byte once
    for match in _NESTED.finditer(data):
        if match.start() >= nested_end and _is_secret_name(match.group(1).decode("utf-8", "replace"), False):
            values, nested_end = _nested_values(data, match.end() - 1)
            yield from values
    for match in _PGPASS.finditer(data):
        value = match.group(1).decode("utf-8", "replace")
        if not value.replace(":", "").isdigit() and _is_quoted_secret(value):  # not a time, "12:30:45:12:00"
            yield match.span(1)
    machine, alone = _NETRC
    for match in machine.finditer(data):
        if _is_quoted_secret(match.group(1).decode("utf-8", "replace")):
            yield match.span(1)
    for match in alone.finditer(data):
        # Alone on its line a word is as likely a heading ("Password reset"): only a
        # value with a digit or a symbol in it.
        value = match.group(1).decode("utf-8", "replace")
        if not value.rstrip(".,;:!?").isalpha() and _is_quoted_secret(value):
            yield match.span(1)


# --- prose ---------------------------------------------------------------------------------

# How a note says it: "the wifi password is BlueOcean2026", "root password for db01:
# Xk29vq7LmN", "**Password:** hunter2xY", "Password - X", "log in with password X", a
# Markdown table's `| password | X |`, "Das Passwort lautet X", "mot de passe : X". The
# name is a whole phrase here, never a part of an identifier, and what may stand between
# it and the value is a short "(...)", a short "for ..." and a verb or a mark.
_PROSE_NAME = (
    r"(?:pass(?:word|wd|phrase|code)|pass[ \t]+phrase|pw|pwd|passwort|kennwort|mot[ \t]+de[ \t]+passe"
    r"|contrase(?:\x{f1}|n)a|clave|secret(?:[ \t]+(?:access[ \t]+)?key)?|api[ \t_-]?key|access[ \t]+key"
    r"|private[ \t]+key|auth[ \t]+token|token"
    r"|(?:wi-?fi|wlan|wpa2?|network|vpn|encryption|recovery|pre-?shared|master|account)[ \t-]?(?:key|schl\x{fc}ssel)"
    r"|(?:wi-?fi|wlan|vpn|db|admin|root|sudo)[ \t]+pass"
    r"|(?:recovery|backup)[ \t]+code|pin(?:[ \t]+code)?"
    r"|(?:door|gate|alarm|lock|lockbox|key[ \t]?box|safe|garage)[ \t]+code"
    r"|(?:safe|lock|locker|padlock)[ \t]+combination)s?"
)
# What says the value comes next: "is", "was now", "has been changed to", "'s", "ist",
# "lautet", "est", "es", "changed", and a mark after them ("is:", "changed ->"); each
# part optional and bounded.
_PROSE_VERB = (
    r"(?:(?:\bis|\bwas|\bare|\bwere|\bhas[ \t]+been|\bwill[ \t]+be|'s|\bist|\bwar|\blautet|\best|\bes|\bera)"
    r"(?:[ \t]+(?:now|just|still|currently|simply|also|temporarily))?)?"
    r"(?:[ \t]*(?:\bset[ \t]+to|\breset|\bchanged|\bupdated)(?:[ \t]+to)?)?"
)
_PROSE_MARK = r"(?::|-|\x{2013}|\x{2014}|\x{2192}|=>?)"
_PROSE_VALUE = (
    r"(\"[^\"\n]*\"?|'[^'\n]*'?|\x{201c}[^\x{201d}\n]*\x{201d}?|\x{ab}[^\x{bb}\n]*\x{bb}?"
    r"|\x{201e}[^\x{201c}\n]*\x{201c}?|`[^`\n]*`?|[^\s\"'`|\x{201c}\x{ab}\x{201e}]+)"
)
# The "(...)" and the "for ..." are bounded, so that a name with no verb after it costs a
# short look ahead, not a scan of the rest of its line per match; longer, it is a clause.
_PROSE = _re2(
    r"(?i)\b" + _PROSE_NAME + r"(?:[ \t]*\([^()\n]{1,40}\))?"
    r"(?:[ \t]+(?:for|of|to|on|at)[ \t]+(?:[^\n.:;=|*\"'`%]|'s){1,40}?[ \t]*"
    r"(?:(?:\bis|\bwas|\bare|\bwere)[ \t]*:?|" + _PROSE_MARK + ")"
    # The other languages' verbs only after their own prepositions: the first verb ends
    # the "for ...", and "the password for the ES cluster" has none.
    + r"|[ \t]+(?:du|de|des|del|f\x{fc}r|pour|para)[ \t]+[^\n.:;=|*\"'`%]{1,40}?[ \t]*"
    r"(?:(?:\bist|\bwar|\blautet|\best|\bes|\bera)[ \t]*:?|" + _PROSE_MARK + ")"
    r"|[ \t]+([^\s\d.:;=|*\"'`%()_]{1,20}(?:[ \t]+[^\s\d.:;=|*\"'`%()_]{1,20})?)[ \t]*:"
    r"|[*_]*[ \t]*(?:" + _PROSE_VERB + r"[ \t]*" + _PROSE_MARK + "|" + _PROSE_VERB + r")?[*_]*)"
    r"[ \t]+" + _PROSE_VALUE
)
# "I changed the password to X", "set the admin password to X": a bare "password to X"
# is as often "send the password to ops".
_PROSE_SET = _re2(
    r"(?i)\b(?:set|reset|changed?|updated?)[ \t]+(?:[^\s.:;=|]{1,30}[ \t]+){0,3}?"
    + _PROSE_NAME + r"[ \t]+to[ \t]+" + _PROSE_VALUE
)
# The value before the name: "try hunter2xyz as the password", and the word after the
# name, which may make it another thing ("as the password hash").
_PROSE_AS = _re2(
    r"(?i)\b(?:use|try|enter|type|put|paste|pick|choose|set)[ \t]+"
    r"(\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|`[^`\n]{1,100}`|[^\s\"'`]{1,100})"
    r"[ \t]+as[ \t]+(?:(?:the|your|my|our|a|an)[ \t]+)?(?:[\w-]{1,20}[ \t]+)?"
    + _PROSE_NAME + r"\b(?:[ \t]+([a-z]{1,20}))?"
)
# The value in brackets after the name, said to be it: "the webhook secret (it's X)",
# "the jira password (currently X)".
_PROSE_PAREN = _re2(
    r"(?i)\b" + _PROSE_NAME + r"[ \t]*\((?:it'?s|it[ \t]+is|currently|now|is|was|new|old|default|temp|temporary)"
    r"[ \t:]+([^()\s]{1,100})\)"
)
# A table's row or a two-column line: `| password | X |`, `Password | X`.
_PROSE_CELL = _re2(r"(?im)\b" + _PROSE_NAME + r"[ \t]*\|[ \t]*([^|\n]{1,200}?)[ \t]*(?:\||$)")
# Each pattern, the group of its value, and the group of words after the name that may
# make it another thing (0: none).
_PROSE_PATTERNS = ((_PROSE, 2, 1), (_PROSE_CELL, 1, 0), (_PROSE_SET, 1, 0), (_PROSE_AS, 1, 2), (_PROSE_PAREN, 1, 0))
# A table whose header names a secret column: `| Service | User | Password |`.
_PROSE_HEADER = _re2(r"(?im)^[ \t]*\|[^\n]*?\b" + _PROSE_NAME + r"[ \t]*\|[^\n]*$")
_PROSE_HEADER_CELL = _re2(r"(?i)[ \t]*[*_]{0,2}" + _PROSE_NAME + r"[*_]{0,2}[ \t]*")
_MAX_TABLE_ROWS = 200
_COMPOUND_HEADS = frozenset(
    "hash hashes hashing salt manager generator rotation strength reuse response request flag flags".split()
)
_PROSE_QUOTES = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u00ab": "\u00bb", "\u201e": "\u201c"}
_SENTENCE_END = ".,;:!?)"
# Names whose values are numbers: a PIN, a door code, a recovery key; a pin and a door
# code are nothing else ("pin 13 is the LED"), the rest may also be a password's shape.
_NUMERIC_NAME = re.compile(
    rb"(?i)\b(?:(pin(?:[ \t]+code)?|(?:door|gate|alarm|lock|lockbox|key[ \t]?box|safe|garage)[ \t]+code"
    rb"|(?:safe|lock|locker|padlock)[ \t]+combination)|pass[ \t]*code|recovery[ \t]+key"
    rb"|(?:recovery|backup)[ \t]+code)"
)
_NUMBER = re.compile(r"\d{4,12}[#*]?|\d{4,8}(?:-\d{4,8}){1,9}|\d{1,3}(?:-\d{1,3}){2,5}")
# A list of codes: each further one on the line goes too.
_PLURAL_CODES = re.compile(rb"(?i)\b(?:recovery|backup)[ \t]+codes")
_NEXT_CODE = re.compile(rb"[ \t]*[,;]?[ \t]+([^\s,;]{1,64})")
# Words joined by hyphens, as password managers write passphrases: "correct-horse-battery-staple".
_WORD_CHAIN = re.compile(r"[A-Za-z]{3,}(?:-[A-Za-z]{3,}){2,}")
# An algorithm, a curve, an encoding: what "the key is ..." names when it holds no key.
_ALGORITHM = re.compile(
    r"(?i)(?:sha|md|aes|rsa|dsa|ecdsa|ed|x|secp|sect|prime|brainpoolp|curve|hs|rs|es|ps|base|utf|pbkdf|argon"
    r"|blake|crc|chacha|poly|hmac|p|wpa|wep|tls|tlsv|ssl|des|rc|bcrypt|scrypt)-?\d+(?:[a-z]{1,3}\d*)?(?:-[a-z0-9]+)*"
)


def _prose_spans(data: bytes) -> Iterator[Span]:
    """Secrets written in sentences. A bare value counts only when it cannot be a word of
    the sentence: letters and digits mixed, eight characters or more ("BlueOcean2026",
    not "stored", "sha256" or "v2") and no algorithm's name ("secp256k1", "HS256-signed"),
    three or more words joined by hyphens, or random-looking; a quoted one unless it is a
    single word, a placeholder or code. After a PIN's or a door code's name, four digits
    or more."""
    for pattern, value_group, words_group in _PROSE_PATTERNS:
        for match in pattern.finditer(data):
            if words_group and match.start(words_group) >= 0 and _is_compound(match.group(words_group)):
                continue  # "the auth token fields: `--oidc-email`", "as the password hash"
            start = match.start()
            value_start, value_end = match.span(value_group)
            if start and data[start - 1] == 0x2E and pattern is not _PROSE_SET:
                continue  # `self.token = ...`: code, which the assignment rules read
            between = data[start:value_start]
            if b"=" in between and data[value_start : value_start + 1] in _QUOTES:
                continue  # `token = 'Bearer %s' % x`: code too
            name = _NUMERIC_NAME.search(between)
            only_numeric = name is not None and name.group(1) is not None
            span = _prose_value(data, value_start, value_end, name is not None, only_numeric, between)
            if span is None:
                continue
            yield span
            if _PLURAL_CODES.search(between):
                yield from _more_codes(data, span[1])
    yield from _table_spans(data)


def _is_compound(words: bytes) -> bool:
    """Whether the words after a secret's name make it another thing: "password hash",
    "token response"."""
    return any(word in _NOT_SECRET_SUFFIXES or word in _COMPOUND_HEADS for word in words.decode().lower().split())


def _more_codes(data: bytes, position: int) -> Iterator[Span]:
    """The codes after the first in "recovery codes: a1b2-c3d4 e5f6-a7b8 ...", up to the
    first that is not one."""
    for _ in range(32):
        found = _NEXT_CODE.match(data, position)
        if found is None:
            return
        span = _prose_value(data, *found.span(1), numeric=True)
        if span is None:
            return
        yield span
        position = span[1]


def _table_spans(data: bytes) -> Iterator[Span]:
    """The cells under a secret-named column of a Markdown table, up to its last row.
    Each row is read once: a header found inside a table already read is skipped."""
    covered = 0
    for match in _PROSE_HEADER.finditer(data):
        if match.start() < covered:
            continue
        cells = match.group().split(b"|")
        columns = [i for i, cell in enumerate(cells) if _PROSE_HEADER_CELL.fullmatch(cell)]
        if not columns:
            continue
        width = len(cells)
        position = match.end() + 1
        for _ in range(_MAX_TABLE_ROWS):
            end = data.find(b"\n", position)
            end = len(data) if end < 0 else end
            line = data[position:end]
            if not line.lstrip().startswith(b"|"):
                break
            row = line.split(b"|")
            if len(row) == width:
                offset = position
                for i, cell in enumerate(row):
                    if i in columns and cell.strip() and not set(cell.strip()) <= set(b"-:"):
                        lead = len(cell) - len(cell.lstrip())
                        span = _prose_value(data, offset + lead, offset + len(cell.rstrip()))
                        if span is not None:
                            yield span
                    offset += len(cell) + 1
            position = end + 1
            if end == len(data):
                break
        covered = position


def _prose_value(
    data: bytes, start: int, end: int, numeric: bool = False, only_numeric: bool = False, between: bytes = b"|"
) -> Span | None:
    """The secret's span in the value after a name, if it is one. `numeric`: the name is
    a PIN's or a code's, so digits alone count (`only_numeric`: nothing else does);
    `between`: the text from the name to the value, which must hold a verb or a mark for
    words joined by hyphens to count (else a compound: "auth token access-token-expiry")."""
    value = data[start:end].decode("utf-8", "replace")
    closing = _PROSE_QUOTES.get(value[:1])
    if closing is not None:
        start += len(value[0].encode())
        inner = value[1:]
        if inner.endswith(closing):
            # A quoted word names a word (the token "record"); a passphrase has spaces,
            # a password digits or symbols.
            inner = inner[:-1]
            # Spaces inside « », and reStructuredText's double backticks (``False``).
            trimmed = inner.lstrip(" \t`" if closing == "`" else " \t")
            start += len(inner.encode()) - len(trimmed.encode())
            inner = trimmed.rstrip(" \t`" if closing == "`" else " \t")
            if only_numeric:
                return (start, start + len(inner.encode())) if _NUMBER.fullmatch(inner) else None
            secret = _is_quoted_secret(inner) and not inner.isalpha() and not _is_reference(inner)
            if closing == "`" and _IDENTIFIER.fullmatch(inner):
                secret = False  # `access_token`: a name in code
            return (start, start + len(inner.encode())) if secret else None
        # A quote never closed on its line (the pattern runs to the line's end rather
        # than look ahead for the quote, a scan per match): its first word, as if bare.
        start += len(inner.encode()) - len(inner.lstrip().encode())
        value = inner.split(None, 1)[0] if inner.strip() else ""
    # Judged without the sentence's punctuation, masked with it: "Spring2024!" may end
    # in its "!".
    word = value.rstrip(_SENTENCE_END)
    if any(char.isspace() for char in word):
        return None  # a table cell's words: "in 1Password", "see vault"
    if numeric and _NUMBER.fullmatch(word):
        return start, start + len(word.encode())
    if only_numeric or _is_placeholder(word) or _is_reference(word) or _ALGORITHM.fullmatch(word):
        return None
    mixed = _has_digit(word) and any(char.isalpha() for char in word)
    chain = len(word) >= 15 and _WORD_CHAIN.fullmatch(word) and not _PROSE_HEADER_CELL.fullmatch(between)
    secret = (mixed and len(word) >= 8) or _is_random(word) or chain
    return (start, start + len(value.encode())) if secret else None


def _is_reference(value: str) -> bool:
    """Code, a URL, a path or a dotted name: what a sentence about a secret points at,
    not the secret."""
    if _has_code(value) or "://" in value or value.startswith(("/", "~", "--")):
        return True
    # `process.env.MAPS_KEY`, `settings.api_key`; not "Blue.Ocean2026".
    return bool(_REFERENCE.fullmatch(value)) and (value.count(".") >= 2 or "_" in value or not _has_digit(value))


def _assigned_secret(data: bytes, match: re2._Match) -> Span | None:
    """The value's span when ``match`` assigns a literal to a secret-named key."""
    if match.start(1) - match.start() > _MAX_KEY_PREFIX:
        return None  # a run of name characters, not a name
    value_start, value_end = match.span(4)
    if data[value_start : value_start + 1] == b"=":
        return None  # a comparison: `token == "."`
    key_start = _key_start(data, match.start())
    key = data[key_start : match.start(1)]
    before_key = data[key_start - 1 : key_start]
    in_url = before_key != b"" and before_key in b"?&#;"
    # In a query string, a command-line flag (`--password=...`) or a shell's environment
    # (`PGPASSWORD=hunter3 psql`: an upper-case name, `=` unspaced) every value is a
    # literal; elsewhere a bare word may be code, and a value followed by more words prose.
    unspaced = match.group(2) == b"=" and not (match.group(1) or match.group(3))
    env = unspaced and not any(c in _LOWER for c in key)
    literal_place = in_url or key.startswith(b"-") or env
    if not _is_secret_name(key.rstrip(b"\"']").decode("utf-8", "replace"), in_url):
        # A name that only holds "key" or "token" (`tls.key`, `cache_key`): a random-looking
        # value is still a secret (a base64 private key in a Kubernetes Secret).
        bare = data[value_start:value_end].strip(b"\"'`").decode("utf-8", "replace")
        return (value_start, value_end) if _is_random(bare) else None
    quote = data[value_start : value_start + 1]
    if data[value_start : value_start + 3] in (b'"""', b"'''"):
        # `password = """hunter3"""`: the value is what the triple quotes close on its line.
        line_end = data.find(b"\n", value_start)
        close = data.find(data[value_start : value_start + 3], value_start + 3, None if line_end < 0 else line_end)
        if close < 0:
            return None
        value = data[value_start + 3 : close].decode("utf-8", "replace")
        return (value_start + 3, close) if _is_quoted_secret(value) else None
    if quote in _QUOTES:
        if value_end - value_start < 2 or data[value_end - 1 : value_end] != quote:
            return None  # no closing quote on the line: not a string literal
        if before_key == quote and not key.endswith(quote):
            return None  # the key sits inside that string: `getpass('Password: ')`
        if _continues_expression(data, value_end):
            return None  # `auth = "Basic " + encoded`, `"%s" % token`
        value_start, value_end = value_start + 1, value_end - 1
        value = data[value_start:value_end].decode("utf-8", "replace")
        if key.strip(b"\"'").lower() == b"pass" and any(char.isspace() for char in value):
            return None  # `'pass': 'The "pass" statement'`: a word that is more than a name
        return (value_start, value_end) if _is_quoted_secret(value) else None
    value_end = _closed_outside(data, value_start, value_end)
    value = data[value_start:value_end].decode("utf-8", "replace")
    if _is_random(value):
        return value_start, value_end
    if literal_place:
        return (value_start, value_end) if _is_quoted_secret(value) else None
    if not _ends_value(data, value_end):
        # More on the line after `name=value`: a connection string, a logfmt line or a
        # sentence ("password=LibpqPw123 sslmode=require", "login with password=Hunter22x
        # then ..."). A value with a digit or a symbol is a literal there, a word one
        # when another `name=` follows; prose after `name: word` is prose.
        if not unspaced or _has_code(value) or _REFERENCE.fullmatch(value) or _is_placeholder(value):
            return None
        literal = not _IDENTIFIER.fullmatch(value) or _NEXT_FIELD.match(data, value_end) is not None
        return (value_start, value_end) if literal and _is_quoted_secret(value) else None
    key_quoted = (before_key != b"" and before_key in _QUOTES) or key[-1:] in _QUOTES
    ends_line = value_end == len(data) or data[value_end] in b"\r\n#;&"
    return (value_start, value_end) if _is_bare_secret(value, match, key, key_quoted, ends_line) else None


def _closed_outside(data: bytes, start: int, end: int) -> int:
    """Where a bare value ends once the closing brackets it did not open are left out:
    `[docs](/u?access_token=abc123)` and "(see token=abc123)" close a bracket opened
    before the value. Masked with it, the `)` was lost from the stored text and the link
    left open. A password ending in an unopened `)` keeps that one character in the clear."""
    while end > start and data[end - 1 : end] == b")" and data.count(b"(", start, end) < data.count(b")", start, end):
        end -= 1
    return end


def _continues_expression(data: bytes, end: int) -> bool:
    limit = min(len(data), end + 64)
    while end < limit and data[end] in b" \t":
        end += 1
    return end < len(data) and data[end] in b"+%.["


def _has_digit(value: str) -> bool:
    return any(char.isdigit() for char in value)


def _has_code(value: str) -> bool:
    return any(char in value for char in "()[]{}<>")


def _key_start(data: bytes, start: int) -> int:
    limit = max(0, start - _MAX_KEY_PREFIX)
    while start > limit and data[start - 1] in _KEY_BYTES:
        start -= 1
    return start


def about_a_secret(name: str) -> bool:
    """Whether a name is about a secret without holding one (`password_hint`, `key_file`,
    `token_type`), for a caller that takes a name's other words for a secret's."""
    words = [word for word in re.split(r"[^a-z]+", _CAMEL.sub(r"\1_\2", name).lower()) if word]
    return bool(words) and words[-1] in _NOT_SECRET_SUFFIXES


def _is_secret_name(key: str, in_url: bool) -> bool:
    # In a dotted name the last part is what is assigned: `config.password` is a
    # password, `Token.Keyword` (a syntax-highlighting style) is not.
    last = key.rstrip(".").rsplit(".", 1)[-1]
    words = [word for word in re.split(r"[_\-\s]+", _CAMEL.sub(r"\1_\2", last).lower()) if word]
    if not words:
        return False
    if len(words) == 1 and words[0] in (_URL_SECRET_NAMES if in_url else _WHOLE_SECRET_NAMES):
        return True
    # Digits after a word count, and name nothing: `password2`, `webhookSecret2` are
    # secrets. Not a short name that is one only whole: `?key2=value2` is a form field.
    words = [counted for word in words if (counted := word.rstrip("0123456789"))]
    if not words:
        return False
    if words[-1] in _NOT_SECRET_SUFFIXES:
        return False
    if len(words) > 1 and words[-1] in ("pass", "pw"):
        return True  # `ansible_become_pass`, `admin_pw`; alone, `pass` is a secret only whole
    pairs = [a + "_" + b for a, b in zip(words, words[1:])]
    return any(_SECRET_NAME.fullmatch(word) or word.endswith(_SECRET_ENDINGS) for word in (*words, *pairs))


def _ends_value(data: bytes, end: int) -> bool:
    """A bare value ends its line or a field: `Token: the basic unit` is prose, not a key."""
    limit = min(len(data), end + 64)
    while end < limit and data[end] in b" \t":
        end += 1
    return end == len(data) or data[end] in _AFTER_BARE_VALUE


def _is_quoted_secret(value: str) -> bool:
    """A string literal, unless empty, masked already, or a placeholder or format template."""
    if _is_placeholder(value) or _COLOR.fullmatch(value):
        return False
    return any(char.isalnum() for char in _FORMAT_FIELD.sub("", value))


def _is_placeholder(value: str) -> bool:
    """`${TOKEN}`, `<password>`, `%s`, `****`, `null`, or what redaction already left."""
    return (
        value.startswith(_PLACEHOLDER_STARTS)
        or set(value) <= _MASKED_CHARS
        or value.lower() in _NOT_VALUES
        or MARKS.fullmatch(value) is not None
    )


def _is_bare_secret(value: str, match: re2._Match, key: bytes, key_quoted: bool, ends_line: bool) -> bool:
    """Whether an unquoted value is a literal rather than code, a type or a placeholder.
    `ends_line`: nothing but a comment or a field's end follows it, as in an INI file or
    a note (`password=letmein`), where a call's argument (`connect(password=pw)`) has
    more."""
    if _is_placeholder(value) or _has_code(value) or not any(char.isalnum() for char in value):
        return False
    if value.replace(".", "").isdigit():
        # `token_ttl = 3600`, `password_min_length: 12`; a long number may be a PIN or key.
        return len(value) >= 8
    if _REFERENCE.fullmatch(value):
        return False  # `args.password`, `ed25519.Ed25519PrivateKey`
    if not _IDENTIFIER.fullmatch(value):
        return True  # digits or symbols: `hunter2`, `wJalrXUtnFEMI/K7MDENG`
    # A bare word: a variable in code (`password = token`, `private_key: _KEY_TYPES`), a
    # literal in .env and YAML files (`DB_PASSWORD=postgres`, `secret: letmein`).
    separator, spaced = match.group(2), bool(match.group(1) or match.group(3))
    if separator == b"=" and not spaced:
        return ends_line or not any(char in _LOWER for char in key)
    # A quoted key is JSON or a dict, where a bare word can only be a variable.
    return separator == b":" and not key_quoted and value[0].isalpha() and value.islower()


def _is_random(value: str) -> bool:
    """A random-looking token (the library's base64 entropy test), wherever it sits."""
    return bool(_TOKEN_LIKE.fullmatch(value)) and _shannon_entropy(value) > secret_formats.ENTROPY_LIMIT


def _shannon_entropy(value: str) -> float:
    """Bits per character over the library's base64 alphabet, summed in its order, so
    the figure is the library's to the last bit."""
    if not value:
        return 0.0
    entropy = 0.0
    for char in secret_formats.ENTROPY_CHARSET:
        share = value.count(char) / len(value)
        if share > 0:
            entropy += -share * math.log(share, 2)
    return entropy


# --- private keys -----------------------------------------------------------------------------

_PEM_MARKER = _re2(r"(?:-{4,5} ?(BEGIN|END) (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)? ?-{4,5})|Private-Lines: \d+")
_MAX_KEY_BYTES = 64 * 1024
# Base64 lines of any length: a key pasted into one line is still a key.
_BODY_LINE = re.compile(rb"[A-Za-z0-9+/=]+")
_HEADER_LINE = re.compile(rb"[A-Za-z][A-Za-z-]{0,40}: .{0,200}")


def _pem_spans(data: bytes) -> Iterator[Span]:
    """The bodies of private-key blocks, the marker lines kept.

    Markers are paired in one walk: a BEGIN followed by its END within the size bound
    has everything between masked; a BEGIN without one (a truncated key, a PuTTY
    ``Private-Lines:`` section) has the key-like lines after it masked, up to the next
    marker. Each stretch of text is looked at once, so a file of BEGIN lines without
    END costs one pass.
    """
    begin: Span | None = None
    for match in _PEM_MARKER.finditer(data):
        kind = match.group(1)
        if kind == b"END" and begin is not None and match.start() - begin[1] <= _MAX_KEY_BYTES:
            yield from _block_body(data, begin[1], match.start())
            begin = None
            continue
        if begin is not None:
            yield from _body_after(data, begin[1], match.start())
            begin = None
        if kind == b"BEGIN":
            begin = match.span()
        elif kind is None:
            yield from _body_after(data, match.end(), len(data))
    if begin is not None:
        yield from _body_after(data, begin[1], len(data))


def _block_body(data: bytes, start: int, end: int) -> Iterator[Span]:
    """The lines strictly between a BEGIN line and its END line, or, when both markers
    share a line (a key inside a JSON string), the text between them."""
    first_newline = data.find(b"\n", start, end)
    if first_newline < 0:
        if data[start:end].strip():
            yield start, end
        return
    yield from _lines_of(data, first_newline + 1, data.rfind(b"\n", start, end))


def _lines_of(data: bytes, start: int, end: int) -> Iterator[Span]:
    while start < end:
        newline = data.find(b"\n", start, end)
        stop = end if newline < 0 else newline
        if data[start:stop].strip():
            yield start, stop
        start = stop + 1


def _body_after(data: bytes, start: int, limit: int) -> Iterator[Span]:
    """Key-like lines after an unterminated marker: base64 lines and ``Name: value`` headers.

    A blank line may follow headers (PEM's ``DEK-Info``, PGP's ``Version``); any other
    line, or the size bound, ends the body.
    """
    limit = min(limit, start + _MAX_KEY_BYTES)
    blank_allowed = True  # the rest of the marker's own line is usually empty
    while start < limit:
        newline = data.find(b"\n", start, limit)
        stop = limit if newline < 0 else newline
        line = data[start:stop].strip()
        if not line:
            if not blank_allowed:
                return
            blank_allowed = False
        elif len(line) <= 240 and _HEADER_LINE.fullmatch(line):
            blank_allowed = True
            yield start, stop
        elif _BODY_LINE.fullmatch(line):
            blank_allowed = False
            yield start, stop
        else:
            return
        start = stop + 1


# --- putting it together -----------------------------------------------------------------------


def redact(text: str, key: bytes | None = None) -> str:
    """``text`` with every credential found replaced by ``MARK``, line for line.

    Folded first (text/unicode.py): a secret's name in full-width letters is its name,
    and what is stored is the folded text, so no other spelling of it is left to find.
    With a `key`, each mark names its secret by a fingerprint keyed with it
    (`[REDACTED:3f9a]`, text/redacted.py): for text that is an identity, where two
    secrets must not make two things one."""
    if not text:
        return text
    text = normalized(text)
    data = text.encode("utf-8", "surrogatepass")
    spans = [*_token_spans(data), *_assignment_spans(data), *_prose_spans(data)]
    if b"PRIVATE KEY" in data or b"Private-Lines:" in data:
        spans.extend(_pem_spans(data))
    if not spans:
        return text
    return _masked(data, spans, key).decode("utf-8", "surrogatepass")


def _masked(data: bytes, spans: list[Span], key: bytes | None) -> bytes:
    out: list[bytes] = []
    position = 0
    spans.sort()
    start, end = spans[0]
    for next_start, next_end in spans[1:]:
        if next_start <= end:
            end = max(end, next_end)
            continue
        out += (data[position:start], _mask(data[start:end], key))
        position, start, end = end, next_start, next_end
    out += (data[position:start], _mask(data[start:end], key), data[end:])
    return b"".join(out)


def _mask(secret: bytes, key: bytes | None) -> bytes:
    # A span may cross lines (merged neighbours, a key body): keep every newline.
    return b"\n".join(_mark(part, key) if part.strip() else part for part in secret.split(b"\n"))


def _mark(secret: bytes, key: bytes | None) -> bytes:
    if key is None:
        return _MARK
    return fingerprinted(hmac.new(key, secret, hashlib.sha256).hexdigest()).encode()
