"""The tasks' solver: one generation, optionally constrained to the answer's JSON Schema."""

from __future__ import annotations

from inspect_ai.model import ResponseSchema
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema


@solver
def answer(structured: bool = False, name: str = "answer") -> Solver:
    """Generate the model's answer to the sample's prompt.

    Parameters
    ----------
    structured
        Send the sample's ``output_schema`` (its metadata) as the response
        format, strict, so that a provider that supports structured output
        answers JSON of exactly that shape.
    name
        The schema's name in the request (``schedule``, ``dependencies``).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not structured:
            return await generate(state)
        schema = ResponseSchema(
            name=name,
            json_schema=JSONSchema.model_validate(state.metadata["output_schema"]),
            strict=True,
        )
        return await generate(state, response_schema=schema)

    return solve
