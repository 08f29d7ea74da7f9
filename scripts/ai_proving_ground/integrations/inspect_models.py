"""Scripted models for offline Inspect evals: ``apg/oracle`` and ``apg/nop``.

The Inspect counterparts of the ``oracle`` and ``nop`` adapters, for trying the integration and
for tests, with no API and no network: ``oracle`` plays the task's reference solution through the
``site`` tool, one step per generate call, then replies with a summary (the ceiling: it scores 1
on every task that has a solution); ``nop`` replies in text only (the floor: it scores 0). The
oracle recognises the task by the sample's prompt in the dataset (model arg ``dataset``, else
``AI_PG_DATASET``, else the shipped ``build_tasks``): the sample itself never holds a solution.

Every output carries a fixed token usage, so Inspect never counts tokens with tiktoken (which
downloads its encoding on first use); :meth:`ScriptedModel.count_text_tokens` estimates without it
for the code paths that count anyway.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.dataset import load_dataset, resolve_dataset_path

SCRIPTS = ("oracle", "nop")
_EXIT_CODE = re.compile(r"\[exit code (-?\d+)\]\s*$")


def _with_usage(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


class ScriptedModel(ModelAPI):
    """``apg/oracle`` or ``apg/nop`` (see the module's docstring)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, dataset: str | None = None,
                 **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in SCRIPTS:
            raise ValueError(f"APG_USAGE unknown scripted model apg/{model_name}; "
                             f"use one of {', '.join('apg/' + s for s in SCRIPTS)}")
        self.solutions: dict[str, list[list[str]]] = {}
        if model_name == "oracle":
            loaded = load_dataset(resolve_dataset_path(dataset, Path.cwd(), Settings.from_environ()))
            self.solutions = {task.prompt: task.reference_steps for task in loaded.tasks}

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo],
                       tool_choice: ToolChoice, config: GenerateConfig) -> ModelOutput:
        return _with_usage(self._next(input))

    def _next(self, messages: list[ChatMessage]) -> ModelOutput:
        name = f"apg/{self.model_name}"
        prompt = next((m.text for m in messages if isinstance(m, ChatMessageUser)), "")
        steps = self.solutions.get(prompt)
        if steps is None:
            return ModelOutput.from_content(name, "I have nothing to do for this task.")
        results = [m for m in messages if isinstance(m, ChatMessageTool)]
        if results:
            last = results[-1]
            code = _EXIT_CODE.search(last.text)
            if last.error is not None or code is None or code.group(1) != "0":
                return ModelOutput.from_content(name, f"Step {len(results)} of the reference "
                                                      "solution failed; stopping.")
        if len(results) < len(steps):
            return ModelOutput.for_tool_call(name, "site", {"command": steps[len(results)]})
        return ModelOutput.from_content(name, f"Applied the {len(steps)} steps of the reference "
                                              "solution.")

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)
