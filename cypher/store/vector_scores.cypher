// purpose: cosine of a query vector to given nodes (rescoring graph candidates)
// params:  $namespace (string), $kind (string), $ids (list<string>), $vector (list<float>),
//          $prop (string): the live vector property
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids AND n.kind = $kind AND n[$prop] IS NOT NULL
RETURN collect([n.id, vector.similarity.cosine(n[$prop], $vector)]) AS rows
