// purpose: BM25 keyword search over memory text, message turns, episode summaries, procedures, their
//          steps, traces (task and outcome) and entity names and aliases. `terms` holds graphmem's own analysis of the text (Snowball
//          stems for English, jieba words for Chinese) led by a scope token for namespace, kind and
//          status, so the whitespace analyzer indexes exactly what the embedded store indexes and a
//          query filters by tenant inside Lucene (benchmarks/fulltext_analyzers.py compares it with
//          standard-no-stop-words and cjk on the raw text). Not eventually consistent: a write is
//          searchable when its transaction commits. A database indexed for fewer labels by an
//          older graphmem has the index dropped and rebuilt by init (schema_fulltext_labels).
// params:  none
// mode:    schema (idempotent: IF NOT EXISTS)
CREATE FULLTEXT INDEX record_terms IF NOT EXISTS
FOR (n:Memory|Message|Episode|Procedure|Entity|Step|Trace) ON EACH [n.terms]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}};
