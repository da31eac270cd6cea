"""Key management over REST for an admin key (``graphmem keys create --admin``): list, create
and revoke tenants' keys. An admin key reaches no namespace's data, and no tenant key reaches
these routes."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ..models.fields import NAMESPACE_PATTERN
from .app import PROBLEM_RESPONSES, Problem, admin
from .keys import ApiKey, KeyStore

router = APIRouter(responses=PROBLEM_RESPONSES, tags=["admin"])


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    namespace: str = Field(pattern=NAMESPACE_PATTERN, description="the tenant the key reaches")
    read_only: bool = Field(default=False, description="reads only: recall, context, lists, export")
    label: str = Field(default="", max_length=200, description="what the key is for")


class KeyMade(BaseModel):
    key: ApiKey
    token: str = Field(description="the key itself: shown this once, only its hash is kept")


def _keys(request: Request) -> KeyStore:
    return request.app.state.keys


@router.get("/v1/keys")
def list_keys(request: Request, revoked: bool = False, _: ApiKey = Depends(admin)) -> list[ApiKey]:
    """Every key (never a token); revoked ones too when asked."""
    return _keys(request).list(revoked=revoked)


@router.post("/v1/keys", status_code=201)
def create_key(body: KeyIn, request: Request, _: ApiKey = Depends(admin)) -> KeyMade:
    """A tenant's key (admin keys are made with the CLI only)."""
    key, token = _keys(request).create(body.namespace, read_only=body.read_only, label=body.label)
    return KeyMade(key=key, token=token)


@router.delete("/v1/keys/{key_id}")
def revoke_key(key_id: str, request: Request, me: ApiKey = Depends(admin)) -> ApiKey:
    """Revoke a key: requests with it get 401 from then on."""
    if key_id == me.id:
        raise Problem(409, "Conflict", "an admin key does not revoke itself (use `graphmem keys revoke`)")
    return _keys(request).revoke(key_id)
