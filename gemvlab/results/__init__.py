"""Results: one JSON schema for every measurement, live or recorded, views onto it, the record that
writes it on a GPU, and the tables printed from it.

    doc = gemvlab.results.load()          # the recorded H200 run (or $GEMVLAB_RECORDED)
    gemvlab.results.headline(doc)         # the stage table's rows
"""

from .schema import DATASHEET_GBPS, DEFAULT_RECORDED, SCHEMA, SchemaError, label, load, save, validate
from .views import (
    best,
    block_sweep,
    by_kind,
    explorer_shapes,
    headline,
    rows,
    shape_summary,
    shapes,
    steps,
)

__all__ = [
    "DATASHEET_GBPS",
    "DEFAULT_RECORDED",
    "SCHEMA",
    "SchemaError",
    "best",
    "block_sweep",
    "by_kind",
    "explorer_shapes",
    "headline",
    "label",
    "load",
    "rows",
    "save",
    "shape_summary",
    "shapes",
    "steps",
    "validate",
]
