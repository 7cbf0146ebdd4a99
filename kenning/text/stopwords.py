"""English function words: dropped from keyword queries, and never taken for names.

The keyword leg, the graph leg's name lookup and the offline extractor must agree on
them: a word the query drops but the extractor keeps as a name would be a seed no
query can reach.
"""

from __future__ import annotations

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves
    """.split()
)

# Verbs so general that a question uses them for any relation ("work from", "run on",
# "use"): the text that answers says the relation its own way ("based in"), and they name
# nothing a note could be told by.
GENERIC_VERBS = frozenset(
    """
    come comes came coming done get gets got getting give gives gave given go goes went going happen
    happens happened keep keeps kept live lives lived make makes made need needs needed run runs ran
    running take takes took taken use uses used using work works worked working
    """.split()
)
