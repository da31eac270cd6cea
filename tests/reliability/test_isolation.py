"""Tenant isolation over every read method: namespaces with look-alike names, randomised
calls, and no result, id or count from another tenant (both backends; a reduced run: the full
one is ``python benchmarks/faults.py --only isolation``, 10,000 calls)."""

from __future__ import annotations

from benchmarks.faults import isolation_calls, seed_tenants, table

from ..conftest import make_memory

CALLS = 400


def test_no_read_returns_another_tenants_data(backend, tmp_path):
    with make_memory(backend, tmp_path) as m:
        row = isolation_calls(m, seed_tenants(m), CALLS)
    assert row.trials == CALLS and row.failures == 0, table([row])
