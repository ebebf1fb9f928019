"""The search pipeline stages (SPEC section 4), one module per stage. search() in
apps/search/services.py composes them; re-rankers take and return lists of `Ranked`."""
