// purpose: approximate nearest-neighbour (HNSW) indexes on node embeddings, cosine, one per label.
//          The dimension comes from the configured embedder (settings), never from a constant.
//          A re-embedding fills a second set (`embedding_b`, or `embedding` again) beside the live
//          one and swaps; {vector} names the set.
// params:  $dim (int): the embedding dimension; {vector}: the vector property, embedding or embedding_b
// mode:    schema (idempotent: IF NOT EXISTS; a changed dimension needs DROP first, see Neo4jStore.init)
CREATE VECTOR INDEX memory_{vector} IF NOT EXISTS FOR (n:Memory) ON n.{vector}
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX message_{vector} IF NOT EXISTS FOR (n:Message) ON n.{vector}
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX episode_{vector} IF NOT EXISTS FOR (n:Episode) ON n.{vector}
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX procedure_{vector} IF NOT EXISTS FOR (n:Procedure) ON n.{vector}
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX step_{vector} IF NOT EXISTS FOR (n:Step) ON n.{vector}
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX trace_{vector} IF NOT EXISTS FOR (n:Trace) ON n.{vector}
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX entity_{vector} IF NOT EXISTS FOR (n:Entity) ON n.{vector}
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
