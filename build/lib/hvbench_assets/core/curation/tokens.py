"""Per-reviewer tokens for a review server reachable from other machines: shown once, stored as SHA-256."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets

from hvbench_assets.core.curation.tables import REVIEWER_TOKENS
from hvbench_assets.core.warehouse import Warehouse

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def requires_token(host: str) -> bool:
    """Bound to anything but the loopback interface, every request must carry a reviewer token."""
    return host.strip().lower() not in LOCAL_HOSTS and not host.startswith("127.")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(warehouse: Warehouse, reviewer: str) -> str:
    """A new token for `reviewer` (replacing any earlier one); the caller shows it once."""
    reviewer = reviewer.strip()
    if not reviewer or any(c.isspace() for c in reviewer) or len(reviewer) > 64:
        raise ValueError(f"reviewer name {reviewer!r}: one word, at most 64 characters")
    token = secrets.token_urlsafe(24)
    warehouse.replace(REVIEWER_TOKENS, {"reviewer": reviewer}, [{
        "token_sha256": _digest(token), "created_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
        "revoked": False}])
    return token


def revoke_token(warehouse: Warehouse, reviewer: str) -> bool:
    rows = warehouse.rows(REVIEWER_TOKENS, reviewer=reviewer)
    if not rows:
        return False
    warehouse.replace(REVIEWER_TOKENS, {"reviewer": reviewer}, [{**rows[0], "revoked": True}])
    return True


def reviewer_for(warehouse: Warehouse, token: str | None) -> str | None:
    """The reviewer a token belongs to, or None (unknown, revoked, empty)."""
    if not token:
        return None
    digest = _digest(token)
    for row in warehouse.rows(REVIEWER_TOKENS):
        if not row["revoked"] and hmac.compare_digest(row["token_sha256"], digest):
            return row["reviewer"]
    return None
