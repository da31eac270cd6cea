// purpose: approximate top candidates from the HNSW index (all tenants), then only this
//          namespace's nodes of the asked statuses, rescored exactly; `seen` tells the store
//          whether the index ran out of nodes, so it can tell a true shortfall from a filtered one
// params:  $index (string): the label's vector index, $candidates (int), $vector (list<float>),
//          $namespace (string), $statuses (list<string>), $prop (string): the live vector property
// mode:    read
CALL db.index.vector.queryNodes($index, $candidates, $vector) YIELD node
WITH collect(node) AS hits
RETURN size(hits) AS seen,
       [n IN hits WHERE n.namespace = $namespace AND coalesce(n.status, 'active') IN $statuses
        | [n.id, vector.similarity.cosine(n[$prop], $vector)]] AS scored
