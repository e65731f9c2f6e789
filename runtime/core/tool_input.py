"""``ToolInput``: the pydantic base of every tool's input model.

Kept apart from ``tool_types`` so that listing tools never imports pydantic: a tool names its
model lazily (``tool_types.LazyInput``) and the model, with pydantic, is imported on the tool's
first call.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ToolInput(BaseModel):
    """The base of every tool's input model: closed objects, validators built on first use.

    Building a pydantic model's validator costs milliseconds, and a session declares a dozen
    tools but calls few of them, so building waits for the first call (``defer_build``). The
    schemas the model is shown come from ``tools/schemas.json`` (generated, checked by a test),
    so listing the tools builds nothing either.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)
