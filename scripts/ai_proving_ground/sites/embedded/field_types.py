"""What Drupal 10.3 fills in for each core field type when a field is made through the entity API
(as Field UI and ``drush field:create`` make it): the module that provides the type, its storage
and field settings defaults (in the config schema's key order), and the default widget and
formatter with their settings defaults and providers. One table, read by ``field_api``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Plugin:
    """A widget or formatter: its id, settings defaults and the module that provides it."""

    id: str
    settings: dict[str, Any] = field(default_factory=dict)
    module: str = "core"


@dataclass(frozen=True)
class FieldType:
    module: str
    storage: dict[str, Any]
    field: dict[str, Any]
    widget: Plugin
    formatter: Plugin


_NUMBER = {"min": None, "max": None, "prefix": "", "suffix": ""}
_DECIMAL_FORMAT = Plugin("number_decimal", {"thousand_separator": "", "decimal_separator": ".",
                                            "scale": 2, "prefix_suffix": True})
_LIST_STORAGE = {"allowed_values": [], "allowed_values_function": ""}
_TEXTFIELD = {"size": 60, "placeholder": ""}
_AUTOCOMPLETE = {"match_operator": "CONTAINS", "match_limit": 10, "size": 60, "placeholder": ""}
_FILE_STORAGE = {"target_type": "file", "display_field": False, "display_default": False,
                 "uri_scheme": "public"}
_DEFAULT_IMAGE = {"uuid": None, "alt": "", "title": "", "width": None, "height": None}
_FILE_FIELD = {"handler": "default:file", "handler_settings": {},
               "file_directory": "[date:custom:Y]-[date:custom:m]", "file_extensions": "txt",
               "max_filesize": ""}
_LIST = FieldType("options", _LIST_STORAGE, {}, Plugin("options_select"),
                  Plugin("list_default", module="options"))
_TEXT_FORMAT = Plugin("text_default", module="text")

FIELD_TYPES: dict[str, FieldType] = {
    "string": FieldType("core", {"max_length": 255, "case_sensitive": False, "is_ascii": False},
                        {}, Plugin("string_textfield", _TEXTFIELD),
                        Plugin("string", {"link_to_entity": False})),
    "string_long": FieldType("core", {"case_sensitive": False}, {},
                             Plugin("string_textarea", {"rows": 5, "placeholder": ""}),
                             Plugin("basic_string")),
    "text": FieldType("text", {"max_length": 255}, {"allowed_formats": {}},
                      Plugin("text_textfield", _TEXTFIELD, "text"), _TEXT_FORMAT),
    "text_long": FieldType("text", {}, {"allowed_formats": {}},
                           Plugin("text_textarea", {"rows": 5, "placeholder": ""}, "text"),
                           _TEXT_FORMAT),
    "text_with_summary": FieldType(
        "text", {}, {"display_summary": False, "required_summary": False, "allowed_formats": {}},
        Plugin("text_textarea_with_summary", {"rows": 9, "summary_rows": 3, "placeholder": "",
                                              "show_summary": False}, "text"), _TEXT_FORMAT),
    "integer": FieldType("core", {"unsigned": False, "size": "normal"}, _NUMBER,
                         Plugin("number", {"placeholder": ""}),
                         Plugin("number_integer", {"thousand_separator": "",
                                                   "prefix_suffix": True})),
    "decimal": FieldType("core", {"precision": 10, "scale": 2}, _NUMBER,
                         Plugin("number", {"placeholder": ""}), _DECIMAL_FORMAT),
    "float": FieldType("core", {}, _NUMBER, Plugin("number", {"placeholder": ""}),
                       _DECIMAL_FORMAT),
    "boolean": FieldType("core", {}, {"on_label": "On", "off_label": "Off"},
                         Plugin("boolean_checkbox", {"display_label": True}),
                         Plugin("boolean", {"format": "default", "format_custom_false": "",
                                            "format_custom_true": ""})),
    "list_string": _LIST,
    "list_integer": _LIST,
    "list_float": _LIST,
    "email": FieldType("core", {}, {}, Plugin("email_default", {"placeholder": "", "size": 60}),
                       Plugin("basic_string")),
    "telephone": FieldType("telephone", {}, {},
                           Plugin("telephone_default", {"placeholder": ""}, "telephone"),
                           Plugin("basic_string")),
    "link": FieldType("link", {}, {"title": 1, "link_type": 16},
                      Plugin("link_default", {"placeholder_url": "", "placeholder_title": ""},
                             "link"),
                      Plugin("link", {"trim_length": 80, "url_only": False, "url_plain": False,
                                      "rel": "", "target": ""}, "link")),
    "datetime": FieldType("datetime", {"datetime_type": "datetime"}, {},
                          Plugin("datetime_default", module="datetime"),
                          Plugin("datetime_default", {"timezone_override": "",
                                                      "format_type": "medium"}, "datetime")),
    "timestamp": FieldType(
        "core", {}, {}, Plugin("datetime_timestamp"),
        Plugin("timestamp", {"date_format": "medium", "custom_date_format": "", "timezone": "",
                             "tooltip": {"date_format": "long", "custom_date_format": ""},
                             "time_diff": {"enabled": False, "future_format": "@interval hence",
                                           "past_format": "@interval ago", "granularity": 2,
                                           "refresh": 60}})),
    "entity_reference": FieldType("core", {"target_type": "node"},
                                  {"handler": "default", "handler_settings": {}},
                                  Plugin("entity_reference_autocomplete", _AUTOCOMPLETE),
                                  Plugin("entity_reference_label", {"link": True})),
    "file": FieldType("file", _FILE_STORAGE, {**_FILE_FIELD, "description_field": False},
                      Plugin("file_generic", {"progress_indicator": "throbber"}, "file"),
                      Plugin("file_default", {"use_description_as_link_text": True}, "file")),
    "image": FieldType(
        "image", {**_FILE_STORAGE, "default_image": _DEFAULT_IMAGE},
        {**_FILE_FIELD, "file_extensions": "png gif jpg jpeg webp", "max_resolution": "",
         "min_resolution": "", "alt_field": True, "alt_field_required": True,
         "title_field": False, "title_field_required": False, "default_image": _DEFAULT_IMAGE},
        Plugin("image_image", {"progress_indicator": "throbber",
                               "preview_image_style": "thumbnail"}, "image"),
        Plugin("image", {"image_link": "", "image_style": "",
                         "image_loading": {"attribute": "lazy"}}, "image")),
}

# The module that provides an entity type (a reference's target makes the storage depend on it).
ENTITY_TYPE_MODULES = {"node": "node", "taxonomy_term": "taxonomy", "user": "user",
                       "file": "file", "menu_link_content": "menu_link_content"}
# The config entity a bundle of each entity type is.
BUNDLE_CONFIG = {"node": "node.type.", "taxonomy_term": "taxonomy.vocabulary."}

# The components a node display starts with when Drupal makes it (EntityDisplayBase::init): the
# node base fields whose form display is configurable, by the module their widget needs
# ("core" for none), and the view display's one extra field. Their modules join the display's
# dependencies; so does ``user``, whose ``author`` formatter shows a node's uid in every view.
_CHECKBOX = {"display_label": True}
NODE_FORM_BASE: dict[str, tuple[str, dict[str, Any]]] = {
    "created": ("core", {"type": "datetime_timestamp", "weight": 10, "settings": {}}),
    "path": ("path", {"type": "path", "weight": 30, "settings": {}}),
    "promote": ("core", {"type": "boolean_checkbox", "weight": 15, "settings": _CHECKBOX}),
    "status": ("core", {"type": "boolean_checkbox", "weight": 120, "settings": _CHECKBOX}),
    "sticky": ("core", {"type": "boolean_checkbox", "weight": 16, "settings": _CHECKBOX}),
    "title": ("core", {"type": "string_textfield", "weight": -5, "settings": _TEXTFIELD}),
    "uid": ("core", {"type": "entity_reference_autocomplete", "weight": 5,
                     "settings": _AUTOCOMPLETE}),
}
NODE_VIEW_EXTRA = {"links": 100}
NODE_VIEW_MODULES = ("user",)


def php_field_settings(field_type: str) -> dict[str, Any]:
    """The type's field settings defaults as PHP returns them, before a save casts them: a
    number's ``min`` and ``max`` are ``''`` (an entity API save stores null, as FIELD_TYPES has)."""
    defaults = dict(FIELD_TYPES[field_type].field)
    if FIELD_TYPES[field_type].field is _NUMBER:
        defaults.update({"min": "", "max": ""})
    return defaults
