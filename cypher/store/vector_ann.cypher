// purpose: approximate top candidates of one namespace and kind from the vector index, of the
//          asked statuses, with exact cosines; `seen` tells the store whether the index ran out
//          of nodes, so it can tell a true shortfall from a filtered one
// params:  $ann (int): candidates asked, $vector (list<float>), $namespace (string),
//          $statuses (list<string>); {index}: the kind's vector index, {ann}: the part for this
//          server's line (cypher/parts/), {label}: the kind's label and {vector} the live vector
//          property where the part needs them
// mode:    read
{ann}
RETURN seen, approximate AS scored
