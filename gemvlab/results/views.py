"""Views onto a results document (gemvlab.results.schema): rows by study, kind and shape, the stage
table's rows, a shape's summary, and the kernels a record timed twice."""

from __future__ import annotations


def rows(doc: dict, study: str | None = None, kind: str | None = None, stage: str | None = None,
         M: int | None = None, K: int | None = None, ok: bool = False) -> list[dict]:
    return [r for r in doc["runs"]
            if (study is None or r["study"] == study) and (kind is None or r["kind"] == kind)
            and (stage is None or r["stage"] == stage) and (M is None or r["M"] == M)
            and (K is None or r["K"] == K) and (not ok or r["status"] == "ok")]


def by_kind(found: list[dict]) -> dict:
    """The first row of each kind among `found`: {"dispatch": row, "torch_matmul": row, ...}."""
    out = {}
    for r in found:
        out.setdefault(r["kind"], r)
    return out


def best(candidates: list[dict]) -> dict | None:
    good = [r for r in candidates if r["status"] == "ok"]
    return min(good, key=lambda r: r["ms"]) if good else None


def headline(doc: dict) -> dict:
    """{'stages': [row per stage in order], 'torch': row, 'ceiling': row} of the headline study."""
    found = rows(doc, "headline")
    stages = sorted((r for r in found if r["kind"] == "stage"), key=lambda r: r["number"])
    kinds = by_kind(found)
    return {"stages": stages, "torch": kinds.get("torch_matmul"), "ceiling": kinds.get("read_ceiling")}


def block_sweep(doc: dict, stage: str, variant: int | None = None) -> list[dict]:
    """The headline-shape rows of one stage (one variant), by block size."""
    found = [r for r in rows(doc, "block_sweep", stage=stage) if variant is None or r["variant"] == variant]
    return sorted(found, key=lambda r: (r["variant"] or 0, r["block"]))


def shapes(doc: dict, study: str = "shapes") -> list[tuple[int, int]]:
    """The (M, K) of a study's rows, in the order they were measured."""
    seen = []
    for r in rows(doc, study):
        if (r["M"], r["K"]) not in seen:
            seen.append((r["M"], r["K"]))
    return seen


def shape_summary(doc: dict, M: int, K: int) -> dict:
    """Per shape: the read ceiling, torch.matmul and each stage's row from the round-robin
    comparison ("shape_best"), or, for a stage without one, why it has no time."""
    best_rows = rows(doc, "shape_best", M=M, K=K) or rows(doc, "explorer", M=M, K=K)
    kinds = by_kind(best_rows)
    out = {"ceiling": kinds.get("read_ceiling"), "torch": kinds.get("torch_matmul"), "gemv": kinds.get("dispatch"),
           "stages": {}}
    for r in best_rows:
        if r["kind"] == "stage":
            out["stages"][r["stage"]] = r
    for r in rows(doc, "shapes", kind="stage", M=M, K=K):  # stages that never ran: say why
        out["stages"].setdefault(r["stage"], r)
    out["stages"] = dict(sorted(out["stages"].items(), key=lambda kv: kv[1]["number"]))
    return out


def steps(doc: dict, M: int | None = None, study: str = "steps") -> list[dict]:
    """The "steps" rows (stage 4 taken apart; study "steps_repeat": the same, timed again minutes
    later), in the order they were measured."""
    return rows(doc, study, M=M)


def explorer_shapes(doc: dict) -> list[tuple[int, int]]:
    return shapes(doc, "explorer")
