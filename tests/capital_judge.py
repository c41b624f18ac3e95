"""A judge for the suite ``llmjudge init`` writes: a case passes when its output names the
capital that its ground truth gives. Loaded as a conftest or with ``-p capital_judge``."""

from __future__ import annotations

import json
import re
from typing import Any

import pydantic_ai.models
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


def _block(prompt: str, tag: str, key: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    assert found, f"no <{tag}> in the request"
    return str(json.loads(found.group(1))[key])


def judge(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    texts = (getattr(part, "content", None) for message in messages for part in message.parts)
    prompt = "".join(text for text in texts if isinstance(text, str))
    output = _block(prompt, "Output", "CANDIDATE_OUTPUT")
    capital = _block(prompt, "ExpectedOutput", "GROUND_TRUTH")
    passed = capital in output
    reason = f"the output {'names' if passed else 'does not name'} {capital}"
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"pass": passed, "reason": reason})])


def pytest_llmjudge_model(config: Any) -> FunctionModel:
    return FunctionModel(judge, model_name="capital-judge")
