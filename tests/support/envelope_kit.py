"""Envelopes for tests of what reads the results store: the smallest one its schema accepts."""

from __future__ import annotations

from typing import Any


def smallest_envelope(note: str, evaluation_id: str = "d/t/m/r", task: str = "t",
                      model: str = "m", verdict: str = "pass", retrieved: str = "1.0",
                      agent: str | None = None, run_status: str | None = None) -> dict[str, Any]:
    """The smallest envelope its schema accepts; ``note`` is part of the measurement."""
    details = {"dataset_provenance": "unresolved: none", "note": note,
               **({"apg_run_status": run_status} if run_status else {})}
    return {
        "schema_version": "0.2.2", "evaluation_id": evaluation_id, "retrieved_timestamp": retrieved,
        "evaluation_timestamp": "1",
        "source_metadata": {"source_type": "evaluation_run", "source_organization_name": "o",
                            "evaluator_relationship": "third_party",
                            "additional_details": details},
        "model_info": {"name": model.rpartition("/")[2], "id": model, "additional_details": {
            "deployment_type": "unknown", "model_availability": "unknown",
            **({"agent_adapter": agent} if agent else {})}},
        "eval_library": {"name": "apg", "version": "0", "additional_details": {
            "hash_algorithm": "sha256", "grader_class": "unresolved", "grader_tree": "unresolved"}},
        "evaluation_results": [{
            "evaluation_result_id": "t.pass", "evaluation_name": "t", "evaluation_timestamp": "1",
            "source_data": {"source_type": "other", "dataset_name": "d",
                            "additional_details": {"task_id": task}},
            "metric_config": {"lower_is_better": False, "score_type": "binary", "min_score": 0,
                              "max_score": 1},
            "score_details": {"score": 1.0 if verdict == "pass" else 0.0,
                              "details": {"verdict": verdict, "checks": "[]"}}}],
    }
