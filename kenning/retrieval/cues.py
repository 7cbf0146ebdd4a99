"""Words that say what a chunk does to earlier text, or how sure it is.

Three kinds: a correction ("correction", "no longer", "was wrong", "instead",
"supersedes") restates something differently; a retraction ("retracted", "withdrawn",
"disregard", "do not use") takes something back, often with nothing in its place; a
hedge ("if we were to", "suppose", "proposal", "draft", "we might") states a
possibility, not a fact. A correction or retraction cue in the title or the first lines
of a document above its first section ("Retraction: Q2 NPS", "This ADR supersedes
ADR-0012") speaks for the whole note, and every chunk of it carries it; one further
down counts only on a line that names what the query asks about ("update: the ledger no
longer runs under systemd"), and so does a strong hedge: meeting notes whose one item says
"winter timetable draft circulated" were read as hedged about every other item (on the
third truth set, the notes that moved the ops meeting to Thursdays had their score
scaled by 0.35 for it; no figure of the truth sets changed). A hedge in the title
counts double.

Hand-written patterns rather than a classifier: they are few, they are what people write
in notes, and a hit's explanation can name the cue that moved it. They run on RE2, as
redaction does: the one alternation of every cue is read over each of a search's best
hits, and RE2 does it three times faster than `re` (with `re` it was about 6 ms of a
2-5 word search's time on the event loop at 100,000 chunks, profiled), with the same
matches (bench/truth.py, and 3,400 chunks of bench/ingest.py's library compared match
for match). The lists were written
from the kinds of notes the truth set holds and checked on its dev split only; words
that scientific prose uses for its own claims ("we propose", "proposed", "considering",
"we could") are left out, since on NFCorpus dev they marked one chunk in fifty hedged.
A second round added what people commonly write that the set's notes do not ("it turns
out", "scratch that", "ignore what I said", "strawman"), each narrowed until the set's
notes held no false match: a job "rescheduled" or "cancelled" is an event, not a
correction; "a typo fix" and consumers that "do not rely on order" take nothing back.
What someone "has not agreed" is a fact, not a hedge: only what "is not agreed" or "not
yet agreed" is (a notice withdrawing a winter service because the council has not agreed
winter use of its pier was read as hedged, and so retracted nothing). A third round came
from notes a red-team pass wrote: what is "under evaluation by" someone is a hedge (an
option "under evaluation" alone may be a compound a study evaluated, and "Option B:" or
"in a scenario where" stand in decided ADRs and runbooks); no figure of the truth sets
moved. A hedge word said to be none ("this is not a proposal", "the draft was approved
and is now policy") hedges nothing: read as a hedge, it ranked a standing decision below
the rule it replaced; so is one said to have been one ("this was a proposal; it is now
approved") or to have lost its label ('the "draft" label was removed'). A change announced as "the standup moves
to 10:15" is not a correction: meeting notes announce moves ("the build cache moves to
MinIO") that a later note corrects, and a note that corrects is itself tied only by its
date or the value it replaced.

A fifth round came from the libraries of a few notes (bench/small_libraries.py dev): an
operator's "your sailing has been retimed", an email's "I gave the wrong dates" and a
message's "heads up that from today group walks are £13.50" correct what came before.
Not a fraud warning's "they say you gave the wrong account number", nor "the cafe is
open from today", which opens something new. "New ETA is 26 October" was tried and
dropped: "New members are 12 this year", "the new teaching assistant is 2 days a week"
and "new members are £9.99 for the first month" correct nothing.

Chinese, Japanese and Korean notes say the same their own way ("訂正：", "更正", "정정",
"撤回", "取り消し", "철회", "（案）", "草案", "초안"): the same kinds, in the same tables,
read without word boundaries (see the patterns below); a fourth round, checked on notes
written for it (tests/test_verdict.py), not on the truth sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import re2

from kenning.text import cjk
from kenning.text.frontmatter import OPENINGS, front_matter_lines

_RETRACTION = (
    r"retract(?:ed|ion|s)?|withdr[ae]wn?\b|withdraws|withdrawing|disregard|do not use|don't use|ignore (?:the|my|that"
    r"|this|previous|it|what)|rescind(?:ed)?|fell through|called off|(?:issued|published|posted|sent) in error"
    r"|no longer (?:valid|stands|applies|accurate|true)|is (?:not|no longer) (?:true|accurate|valid|correct)"
    r"|was a mistake|is invalid|invalidated|(?:do not|don't) rely on (?:this|that|these|those|it|the (?:earlier|previous|old))"
    r"|(?:should|must) not be used|not to be used|null and void|(?:was|were|is|are|been) (?:scrapped|shelved)"
    r"|(?:(?m:^)|: |- |let['’]s )scrap (?:the |this |our |my |[\w]+['’]s )"
    r"|(?:was|were|is|are|been) (?:now )?cancell?ed"
)
_CORRECTION = (
    r"correction|corrected|erratum|no longer|(?:was|were|is) wrong"
    r"|(?:\b(?:i|we)|e-?mail|message|post|note|letter|notice|invite|invitation|text) (?:had|gave|put|sent) (?:the|a) wrong\b"
    r"|(?:(?:has|have|had) been|was|were|is|are) (?:now )?(?:rescheduled|re-?timed|postponed|brought forward|pushed back)"
    r"|wrong way round|(?:was|were) too"
    r"|supersed(?:e|es|ed|ing)|instead(?: of)?|replaced by|replaces|out of date|outdated|not .{1,40}? as (?:written"
    r"|stated|announced|documented|noted|recorded)|changed (?:it )?to|moved (?:it )?to|switched to|now using"
    r"|update(?::| on\b)|revised|amended|from now on|going forward|scra(?:p|tch) that|as of (?:today|now)"
    r"|(?:(?m:^)|[,.;:!-] |\bthat )from today\b"
    r"|it turn(?:s|ed) out|typo(?::| in)|errata|clarification|(?:my|our) mistake|change of plans?"
    r"|changed (?:our|my) minds?|revert(?:ed|ing) to|revers(?:ed|ing) (?:the|our|that|this) (?:decision|call)"
    # "she's changed my target", "Dales Roofing have moved the gutter clearing", "Jon and I
    # have swapped"; not a release note's "the meaning of detach has changed" (gdb's NEWS
    # superseded valgrind's manual pages in bench/doc_marks.py), "nothing's changed",
    # "what's changed" or "prices have changed over the years".
    r"|\b(?:she|he|we|they|i|you)(?:['’]s|['’]ve| have| has) (?:now )?(?:changed|moved|swapped)"
    r"|(?:have|has) (?:now )?(?:moved (?:the|it|to|our|his|her|their|my)\b|moved:|swapped)"
)
_HEDGE_STRONG = (
    r"if we (?:were to|did|went|moved|switched|chose|decided)|suppose we|supposing|what if|hypothetically"
    r"|proposal\b|draft|rfc|brainstorm(?:ing)?|idea:|ideas|not yet (?:decided|agreed|adopted|approved|planned)"
    r"|(?:is|are|was|were|been|be|'s|status:)\s+not\s+(?:decided|agreed|adopted|approved|planned)"
    r"|nothing (?:is )?decided|undecided|status: (?:idea|draft|proposal|proposed)|we might|might (?:do|add|move"
    r"|switch|try)|wish ?list|straw ?man|just an idea|not final|to be (?:decided|confirmed)|tb[cd]\b"
    r"|on the table\b|pending (?:approval|sign-off)|under (?:evaluation|consideration) by"
)
_HEDGE_WEAK = r"(?:might|maybe|perhaps|could|possibly|would|if)\b"
# The same in Chinese, Japanese and Korean, which put no space between words, so a cue
# is read without a word boundary (RE2's \b sees none between two Han characters) and
# each is a word that does not stand inside an unrelated one: "案" only as a title's
# mark ("案：", "（案）"), not in 案内 (guidance), 答案 (an answer) or 方案 (a plan);
# "もし" not in もしくは (or); "取り消し" and "撤回", not 取消 (in Chinese, an event
# cancelled). "如果", "もし" and "만약" open a runbook's conditions ("如果服务器无响应，
# 请重启") as "if" does, and are weak; "更新" and "修正" correct only as a label
# ("更新：", "수정:"), since a server is updated and a bug fixed as events; and a plan to
# replace ("紙の作業報告書をアプリに置き換える") announces a change, as "moves to" does.
_RETRACTION_CJK = (
    r"撤回|撤销|撤銷|作废|作廢|废止|廢止|请勿使用|請勿使用|请忽略|請忽略|取り消し|取消し|取り下げ"
    r"|使用しないで|無視して|破棄して|철회|무시하세요|무시해 주세요|사용하지 마세요|무효"
)
_CORRECTION_CJK = (
    r"訂正|订正|更正|勘误|勘誤|正誤|正しくは|誤りがあり|誤りでした|間違いでした|差し替え|ではなく"
    r"|の代わりに|変更になりました|に変更しました|に変更されました|今後は|不再|改为|改為|改成|取代|而不是"
    r"|更改为|更改為|变更为|變更為|(?:更新|修正|업데이트|수정)\s*[:：]|정정|대신|더 이상"
    r"|(?:으로|로) 변경되었습니다|(?:으로|로) 바뀌었습니다"
)
_HEDGE_STRONG_CJK = (
    r"[（(【]案[）)】]|(?m:^)案\s*[:：]|提案|草案|試案|原案|たたき台|叩き台|仮に|未定|未決定|検討中"
    r"|假设|假設|假如|征求意见稿|待定|尚未决定|尚未決定|초안|제안|미정|검토 중"
)
_HEDGE_WEAK_CJK = r"もし|如果|也许|也許|或许|或許|만약|아마"
# A hedge word said to be no hedge: "this is not a proposal", "the draft was approved and
# is now policy". Read as one cue that counts for nothing, it keeps the word inside it
# from hedging the line.
# So is one said to have been one ("this was a proposal; it is now approved", "started as
# a draft and has since been adopted") or to have lost its label ('the "draft" label was
# removed'), told in the same clause: "this was a proposal, not yet approved" and "if
# approved, the draft label will be removed" still hedge. RE2 has no look-ahead, so each
# form spells out the words that may stand between.
_SETTLED_AS = (
    r"(?:approved|adopted|accepted|agreed|ratified|signed off|merged|final(?:i[sz]ed)?|confirmed|policy)"
)
_SETTLED_SAID = r"(?:was|were|is|are|has been|have been|is now|are now|got|now|ha(?:s|ve) (?:now|since) been)"
_LABEL = r"[\"'“‘]?(?:draft|proposal|proposed|rfc)[\"'”’]? (?:label|tag|status|watermark|banner|stamp|marking)"
_SETTLED = (
    r"(?:not|(?:is|are|was|were)n['’]t|no longer|never) (?:a |an |the |just a |just an |only a )?"
    r"(?:proposal|draft|rfc|idea|brainstorm)\b"
    rf"|(?:proposal|draft|rfc) {_SETTLED_SAID} {_SETTLED_AS}"
    r"|(?:was|were|started as|began as|used to be) (?:a |an |the |only a |just a )?(?:proposal|draft|rfc)\b"
    rf"[;,:]? (?:and |but |which |that )?(?:it |this |that |they )?{_SETTLED_SAID} (?:formally )?{_SETTLED_AS}"
    rf"|{_LABEL} (?:was|were|has been|have been|got) (?:removed|dropped|lifted|taken off|cleared)"
    rf"|(?:removed|dropped|lifted|took off|cleared) the {_LABEL}"
    # What a notice says came from an old draft it takes back: "Please disregard the item
    # about the 2m net. It was posted by mistake from an old draft."
    r"|(?:from|of|in) (?:an? |the )?(?:old|older|earlier|previous|outdated) (?:draft|proposal)\b"
)
# "Draft" as what someone is told not to do ("do not draft the budget yet; the budget is
# 40k", "don't draft replies from it") says nothing of whether the note is a draft: it
# is no cue. "Do not draft" was read as "not a draft", a hedge said to be none, and
# "don't draft" as a hedge, which ranked the note below the figure it replaced. Nor does
# "draft" as what someone is asked to do ("please draft the reply; the fee is £45", "can
# you draft it", "asked Noor to draft the rota"): a request states no possibility, and
# read as a hedge it ranked the note below the figure it replaced.
_NO_CUE_EN = (
    r"(?:(?:do|does|did|will|would|should|must|need|can|could)(?: not|n['’]t)|won['’]t|can['’]t|cannot|never"
    r"|no need to|not to|please|pls|kindly|(?:can|could|would|will) you(?: please)?"
    r"|ask(?:s|ed|ing)?(?: \w+)? to) (?:re)?draft(?:s|ed|ing)?\b"
    # What is done when something is cancelled takes nothing back ("## When a sailing is
    # cancelled", "if your train is cancelled", "orders that are cancelled", but "note
    # that the hike is cancelled" does), nor what is not cancelled ("has not been
    # cancelled", "hasn't been").
    r"|(?:(?:when|whenever|if|once|until|unless|in case)(?: \w+){0,5}?|that|which|who)(?: ha(?:s|ve|d))?"
    r" (?:was|were|is|are|been|gets?|got) (?:cancell?ed|postponed|rescheduled|pushed back)\b"
    r"|(?:not|\w*n['’]t|never) (?:been |be |yet )?(?:cancell?ed|postponed|rescheduled|pushed back)\b"
    # Nor what someone may have changed: "if they've moved the dress rehearsal, let me know".
    r"|(?:if|whether|unless|in case)(?: \w+){0,4}?(?:['’]s|['’]ve| have| has) (?:now )?(?:changed|moved|swapped)\b"
)
# One pass over a text finds every cue; where two kinds could start at one place, the
# earlier alternative wins ("no longer valid" retracts before "no longer" corrects). A
# cue that is the start of a longer word ends in a word boundary: "sign in on the
# tablet" put a food bank's handbook "on the table", and "the ATM withdrawal limit"
# withdrew a bank's fee page.
# Texts are lower-cased first: matching without IGNORECASE is four times faster.
_CUES = re2.compile(
    rf"\b(?:(?P<none>{_NO_CUE_EN})|(?P<settled>{_SETTLED})|(?P<retraction>{_RETRACTION})"
    rf"|(?P<correction>{_CORRECTION})"
    rf"|(?P<strong>{_HEDGE_STRONG})|(?P<weak>{_HEDGE_WEAK}))"
)
# The CJK cues are a second pattern, read only on text that is not all ASCII: joined to
# the first, they made reading the truth set's notes six times slower (48 ms against
# 8 ms for its 172,000 characters), apart they add 1.6 ms. Words that hold a cue and are
# none ("もしくは" is "or", "未定義" undefined, "아마존" Amazon) are read first at their
# place, so the cue inside them is not.
_NO_CUE = r"もしくは|未定義|아마존"
_CJK_CUES = re2.compile(
    rf"(?P<none>{_NO_CUE})|(?P<retraction>{_RETRACTION_CJK})|(?P<correction>{_CORRECTION_CJK})"
    rf"|(?P<strong>{_HEDGE_STRONG_CJK})|(?P<weak>{_HEDGE_WEAK_CJK})"
)
# A front matter line's key.
_KEY = re.compile(r"^\s*[\w-]+(?::|\s*=)\s")
_WORD = re.compile(r"\w+")
# Weak hedges in a chunk's body count this much each; a chunk is hedged at 1.
WEAK = 0.15
HEDGED = 1.0
# Lines of a document's opening whose cues speak for the whole document, and how many
# first letters of a query word a line must hold to name it.
OPENING_LINES = 6
STEM = 5


@dataclass(frozen=True)
class Cues:
    correction: str | None
    retraction: str | None
    hedge: float
    hedge_word: str | None
    # Where each of the first two was said, which names what is corrected or taken
    # back: the line it stands on (in the document's opening, or in the chunk), or for a
    # title, the title and the chunk's lines with a cue of that kind.
    correction_context: str
    retraction_context: str

    @property
    def hedged(self) -> bool:
        return self.hedge >= HEDGED


@lru_cache(maxsize=512)
def _found(text: str) -> dict[str, list[re2._Match]]:
    """Every cue in a lower-cased text, by kind; not to be changed by the caller, since
    it is kept: a search reads a document's opening once for each of its hits, and the
    next search often reads the same hits."""
    found: dict[str, list[re2._Match]] = {"settled": [], "retraction": [], "correction": [], "strong": [], "weak": []}
    for match in _matches(text):
        found[match.lastgroup or "weak"].append(match)
    return found


def _matches(text: str) -> list[re2._Match]:
    """Every cue in a lower-cased text, English and CJK, in the order they stand."""
    found = list(_CUES.finditer(text))
    if not text.isascii():
        found += list(_CJK_CUES.finditer(text))
        found.sort(key=lambda match: match.start())
    return [match for match in found if match.lastgroup != "none"]


def _opening(lead: str) -> str:
    """A document's front matter and first lines, up to its second heading: where a note
    says what it is. A section below the title speaks for itself: a changelog's first
    entry ("family ticket withdrawn") takes nothing back for the whole changelog."""
    lines = lead.split("\n")
    start = front_matter_lines(lines)
    opening = lines[start : start + OPENING_LINES]
    headings = [n for n, line in enumerate(opening) if line.startswith("#")]
    if len(headings) > 1:
        opening = opening[: headings[1]]
    return "\n".join(lines[:start] + opening)


def _line(text: str, match: re2._Match) -> str:
    """The line the match stands on; in the front matter, without its key ("title: ..."),
    which is no word of the note's."""
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    line = text[start : end if end >= 0 else len(text)]
    if text.startswith(OPENINGS) and text.count("\n", 0, start) < front_matter_lines(text.split("\n")):
        return _KEY.sub("", line, count=1)
    return line


def cue_words(text: str) -> set[str]:
    """The words of every cue in a lower-cased text ("instead", "no", "longer"); of "not
    ... as written", not the words between, which say what was not written."""
    words: set[str] = set()
    for match in _matches(text):
        if match.lastgroup == "settled":
            continue
        found = _WORD.findall(match.group())
        if found[0] == "not" and "as" in found[1:]:
            found = ["not", "as", found[-1]]
        words.update(found)
        # And a CJK cue's pieces, which is how a chunk's CJK words are told (truth.py).
        words.update(cjk.pieces(match.group()))
    return words


def _on_topic(matches: list[re2._Match], text: str, keys: list[str]) -> tuple[str | None, str]:
    """The first cue in a line that also names two of the query's words (by their first
    letters, so "restarting" names "restart"; one when the query has one), and that
    line: a correction elsewhere in a long chunk is about something else, and so is one
    on a line naming only the thing asked about ("café lease at Skerrivaig not renewed;
    vending machines instead" says nothing of when the Skerrivaig office opens). On the
    truth set's dev and tune questions that took 100 links to 94, every one the set
    means kept. `text` is lower-cased, as the keys are."""
    stems = [key[:STEM] for key in keys]
    for match in matches:
        line = _line(text, match)
        if _names(line, stems):
            return match.group(), line
    return None, ""


def _names(line: str, stems: list[str]) -> bool:
    return sum(stem in line for stem in stems) >= min(2, len(stems))


def read(title: str, text: str, lead: str = "", keys: list[str] | None = None) -> Cues:
    """Cues of a chunk with `title` and `text`; `lead` is its document's opening chunk,
    and `keys` the query's words a cue in the body must share a line with."""
    text, lead = text.lower(), lead.lower()
    heading, body, in_lead = _found(title.lower()), _found(text), _found(lead)
    # The opening is the lead's first lines, and no cue runs across a line's end.
    opening_end = len(_opening(lead))
    opening = {kind: [m for m in matches if m.end() <= opening_end] for kind, matches in in_lead.items()}
    lead_strong = len(in_lead["strong"]) if lead != text else 0
    # Below the opening, a hedge is about the line it stands on: "Winter timetable draft
    # circulated" in the ops meeting's notes hedges nothing of when the meeting is held.
    stems = [key[:STEM] for key in keys or []]
    in_opening = opening_end if lead == text else 0
    strong = [m for m in body["strong"] if m.end() <= in_opening or _names(_line(text, m), stems)]
    hedge = 2 * len(heading["strong"]) + max(len(strong), lead_strong) + WEAK * len(body["weak"])
    hedge_word = next((found[0] for found in (heading["strong"], strong) if found), None)
    hedge_word = hedge_word or (body["weak"][0] if body["weak"] else None)

    def said(kind: str) -> tuple[str | None, str]:
        # A note whose title says what it is names what it takes back there, and again
        # where its text says so ("the threshold ... is £250, not £500"); a line of its
        # opening names it on that line, and the note's other lines with a cue are about
        # other things ("one queue per customer" under the corrected decision).
        if heading[kind]:
            told = [_line(text, match) for match in body[kind]]
            return heading[kind][0].group(), "\n".join([title.lower(), *told])
        if opening[kind]:
            return opening[kind][0].group(), _line(lead, opening[kind][0])
        return _on_topic(body[kind], text, keys or [])

    correction, correction_context = said("correction")
    retraction, retraction_context = said("retraction")
    return Cues(
        correction=correction,
        retraction=retraction,
        hedge=hedge,
        hedge_word=hedge_word.group() if hedge_word else None,
        correction_context=correction_context,
        retraction_context=retraction_context,
    )
