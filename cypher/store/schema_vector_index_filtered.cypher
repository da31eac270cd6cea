// purpose: one kind's vector index on Neo4j 2026.x, with the namespace as a filter property so
//          a search walks only one tenant's nodes (cypher/parts/ann_filtered.cypher); the same
//          name as the Neo4j 5 form in schema/04 (which this replaces there). A search expands
//          10x its LIMIT (the default 3x gave recall@10 0.86 in a 28k-node tenant at LIMIT 100,
//          10x 1.000), without quantization (binary, the default, gave the same recall 1.5-2x
//          slower once expanded); benchmarks/neo4j_tenants.py
// params:  $dim (int): the embedding dimension; {index}: its name, {label}: the kind's label,
//          {vector}: the vector property, embedding or embedding_b
// mode:    schema (idempotent: IF NOT EXISTS)
CYPHER 25
CREATE VECTOR INDEX {index} IF NOT EXISTS FOR (n:{label}) ON n.{vector} WITH [n.namespace]
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine',
                       `vector.quantization.type`: 'NONE', `vector.default_search_expansion_factor`: 10.0}}
