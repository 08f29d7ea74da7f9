"""A role made as Drupal's entity API makes it (``drush role:create``, the Add role form):
``Role::create()->save()`` fills uuid, langcode, status, dependencies and the entity's defaults
and puts the role after the heaviest one (``Role::preSave``); then ``user_user_role_insert``
makes the two actions that add and remove the role on users.
"""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

from ai_proving_ground.sites.embedded.bundle_api import save_new
from ai_proving_ground.sites.embedded.field_api import Save
from ai_proving_ground.sites.embedded.store import Store

_ROLE = "user.role."
# The roles Drupal makes no actions for (the user module's own).
_BUILT_IN = ("anonymous", "authenticated")
_ACTIONS = (("user_add_role_action", "Add the {label} role to the selected user(s)"),
            ("user_remove_role_action", "Remove the {label} role from the selected user(s)"))


def _new(values: dict[str, Any]) -> dict[str, Any]:
    return {"uuid": str(uuidlib.uuid4()), "langcode": "en", "status": True,
            "dependencies": {}, **values}


def create_role(store: Store, rid: str, label: str, save: Save) -> list[str]:
    """Save the role and its two actions; the names saved."""
    weights = [int(data.get("weight") or 0)
               for data in store.config_get_many(store.config_names(_ROLE)).values()
               if isinstance(data, dict)]
    role = _new({"id": rid, "label": label, "weight": max(weights) + 1 if weights else None,
                 "is_admin": False, "permissions": []})
    saved = [save_new(store, f"{_ROLE}{rid}", role, save)]
    if rid in _BUILT_IN:
        return saved
    for plugin, text in _ACTIONS:
        name = f"system.action.{plugin}.{rid}"
        if store.config_get(name) is None:
            save(store, name, _new({
                "dependencies": {"config": [f"{_ROLE}{rid}"], "module": ["user"]},
                "id": f"{plugin}.{rid}", "label": text.format(label=label), "type": "user",
                "plugin": plugin, "configuration": {"rid": rid}}))
            saved.append(name)
    return saved
