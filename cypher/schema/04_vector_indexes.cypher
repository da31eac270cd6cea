// purpose: approximate nearest-neighbour (HNSW) indexes on node embeddings, cosine, one per label.
//          The dimension comes from the configured embedder (settings), never from a constant.
// params:  $dim (int): the embedding dimension
// mode:    schema (idempotent: IF NOT EXISTS; a changed dimension needs DROP first, see Neo4jStore.init)
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS FOR (n:Memory) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX message_embedding IF NOT EXISTS FOR (n:Message) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX episode_embedding IF NOT EXISTS FOR (n:Episode) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX procedure_embedding IF NOT EXISTS FOR (n:Procedure) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:Entity) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
