"""Execute a Drupal ``views.view.*`` config object over entity records, as Views would.

The embedded site has no SQL schema per field, so this module answers the part of Views a
grader looks at: which entities a display lists, in which order, and how many match. The
caller passes every entity of the view's base type; filtering, sorting and paging happen
here. Anything the embedded site cannot reproduce faithfully (relationships, contextual
filters that need an argument, relative dates) raises :class:`ViewError` rather than
returning rows Drupal would not.
"""

from ai_proving_ground.sites.embedded.views.columns import base_entity_type
from ai_proving_ground.sites.embedded.views.context import FieldInfo, ViewError, ViewSchema
from ai_proving_ground.sites.embedded.views.execute import execute_view

__all__ = ["FieldInfo", "ViewError", "ViewSchema", "base_entity_type", "execute_view"]
