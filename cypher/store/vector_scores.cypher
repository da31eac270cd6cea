// purpose: cosine of a query vector to given nodes of the given kinds (rescoring candidates;
//          a feedback pass asks for every layer's at once)
// params:  $namespace (string), $kinds (list<string>), $ids (list<string>), $vector (list<float>);
//          {vector}: the live vector property (named, not n[$prop]: a dynamic property read cost
//          370 cosines 14.5 ms of server CPU, the named one 8.8)
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids AND n.kind IN $kinds AND n.{vector} IS NOT NULL
RETURN collect([n.id, vector.similarity.cosine(n.{vector}, $vector)]) AS rows
