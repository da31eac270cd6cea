"""Text in English and Chinese: tokens for keyword search, keywords for dedupe,
entity tagging (spaCy for English, jieba for Chinese) and token counting."""

from .tokens import (MAX_QUERY_TERMS, STOPWORDS, content_sentences, fts_query, index_terms, keywords, query_terms,
                     segment, stem)
from .entities import EntityTagger, TaggedEntity, name_grams, normalise_name, possessed, without_names
from .when import time_span
from .tokencount import ApproxTokenCounter, TokenCounter

__all__ = [
    "MAX_QUERY_TERMS", "STOPWORDS", "ApproxTokenCounter", "EntityTagger", "TaggedEntity", "TokenCounter",
    "content_sentences", "fts_query", "index_terms",
    "keywords", "name_grams", "normalise_name", "possessed", "query_terms", "segment", "stem", "time_span",
    "without_names",
]
