"""Text helpers every stage may use: stopwords, entity-name keys, HTML to markdown,
dates, a chunk read as statements.

They sit below the store so that ingest, workers and retrieval share one definition of
each instead of importing one another.
"""
