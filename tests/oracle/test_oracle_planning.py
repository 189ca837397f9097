"""Planning metrics on hand-worked examples, and reading predicted structures."""

from __future__ import annotations

import pytest
from oracle_helpers import CHAIN

from peakopt.instances import load
from peakopt.oracle.answers.structure import Structure, parse_structure, structure_from_response
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.planning import PRF, plan_score
from peakopt.oracle.tables.score_rows import score_prediction

SUITE = load("bundled:refund")
REFUND = SUITE.workflows[0]
L, F, H, P, D = "lookup_order", "fraud_score", "history_scan", "policy_search", "decide"


def structure(edges: list[tuple[str, str]], nodes: tuple[str, ...] = ()) -> Structure:
    return Structure(frozenset({n for e in edges for n in e} | set(nodes)), frozenset(edges))


def prf(score: PRF | None) -> tuple[float, float, float]:
    assert score is not None
    return score.precision, score.recall, score.f1


def test_perfect_prediction() -> None:
    score = plan_score(REFUND, structure([(L, D), (F, D), (H, D), (P, D)]))
    for part in (score.edges, score.closure, score.reduction, score.concurrency):
        assert prf(part) == (1.0, 1.0, 1.0)
    assert score.ged == 0 and score.exact_match and score.order_match and not score.cyclic


def test_redundant_edge_in_a_chain() -> None:
    score = plan_score(CHAIN, structure([("a", "b"), ("b", "c"), ("a", "c")]))
    assert prf(score.edges) == pytest.approx((2 / 3, 1.0, 0.8))
    assert prf(score.closure) == (1.0, 1.0, 1.0)  # the same order
    assert prf(score.reduction) == (1.0, 1.0, 1.0)  # a -> c is implied
    assert prf(score.concurrency) == (1.0, 1.0, 1.0)  # no concurrent pair on either side
    assert score.ged == 1 and score.ged_normalised == pytest.approx(1 / 5)
    assert not score.exact_match and score.order_match


def test_cyclic_prediction_with_a_hallucinated_step() -> None:
    # truth: L, F, H, P -> D. Prediction: L <-> D (a cycle), D -> notify (invented), L -> F.
    score = plan_score(REFUND, structure([(D, L), (D, "notify"), (L, D), (L, F)]))
    assert score.cyclic and score.cycle == [D, L, D]
    assert score.reduction is None  # undefined on a cycle
    assert prf(score.edges) == (0.25, 0.25, 0.25)  # only L -> D is right
    # closure: L->D, D->L, D->notify, L->notify, L->F, D->F; of the 4 true edges only L->D
    assert prf(score.closure) == pytest.approx((1 / 6, 1 / 4, 0.2))
    # 1 invented node + 3 wrong edges + 3 missing edges, over |V| + |E| = 5 + 4
    assert score.ged == 7 and score.ged_normalised == pytest.approx(7 / 9)
    # truth concurrent: LF LH LP FH FP HP; predicted ordered on truth steps: LD DF LF,
    # so predicted concurrent: LH LP FH FP HP HD PD -> 5 right of 7, 5 of 6 found
    assert prf(score.concurrency) == pytest.approx((5 / 7, 5 / 6, 10 / 13))
    assert score.hallucinated == ["notify"] and score.unmentioned == [H, P]
    assert not score.exact_match and not score.order_match


def test_hallucinated_intermediate_step() -> None:
    edges = [(L, D), (F, D), (H, D), (P, D), ("verify_identity", D), (L, "verify_identity")]
    score = plan_score(REFUND, structure(edges))
    assert prf(score.edges) == pytest.approx((4 / 6, 1.0, 0.8))
    assert prf(score.closure) == pytest.approx((4 / 6, 1.0, 0.8))
    # reduction drops L -> D (implied through verify_identity): 3 of 5 right, 3 of 4 found
    assert prf(score.reduction) == pytest.approx((3 / 5, 3 / 4, 2 / 3))
    assert prf(score.concurrency) == (1.0, 1.0, 1.0)
    assert score.ged == 3 and score.hallucinated == ["verify_identity"]


def test_all_independent_prediction() -> None:
    score = plan_score(REFUND, structure([], (L, F, H, P, D)))
    assert prf(score.edges) == (1.0, 0.0, 0.0)  # claims nothing false, finds nothing
    assert prf(score.concurrency) == pytest.approx((6 / 10, 1.0, 0.75))
    assert score.ged == 4


@pytest.mark.parametrize(
    "value",
    [
        {D: [L, F, H, P], L: [], F: [], H: [], P: []},
        {"dependency_structure": {D: [L, F, H, P]}, "reasoning": "decide needs all four"},
        [[L, D], [F, D], [H, D], [P, D]],
        [{"from": L, "to": D}, {"from": F, "to": D}, {"source": H, "target": D}, {"from": P, "to": D}],
        [{"id": D, "depends_on": [L, F, H, P]}, {"id": L}, {"id": F, "depends_on": []}],
        {"steps": [{"step": D, "predecessors": [L, F, H, P]}]},
        {D: {"depends_on": [L, F, H, P]}, L: None},
    ],
)
def test_structure_shapes(value: object) -> None:
    found = parse_structure(value, REFUND.index.keys())
    assert found is not None
    assert found.edges == {(L, D), (F, D), (H, D), (P, D)}


def test_structure_from_response() -> None:
    text = (
        'The dependencies:\n```json\n{"decide": ["lookup_order", "fraud_score"],'
        ' "fraud_score": "lookup_order",}\n```'
    )
    found = structure_from_response(text, REFUND.index.keys())
    assert isinstance(found, Structure)
    assert found.edges == {(L, D), (F, D), (L, F)}
    assert isinstance(structure_from_response("No idea.", ()), Violation)
    assert isinstance(structure_from_response("", ()), Violation)


def test_an_invented_isolated_step_is_hallucinated_not_another_order() -> None:
    edges = [(L, D), (F, D), (H, D), (P, D)]
    score = plan_score(REFUND, structure(edges, ("notify_customer",)))
    assert score.hallucinated == ["notify_customer"] and score.order_match and not score.exact_match
    # an invented step with an edge does change the order the prediction implies
    linked = plan_score(REFUND, structure([*edges, (D, "notify_customer")]))
    assert not linked.order_match and linked.hallucinated == ["notify_customer"]


DEFAULT = load("bundled:default")
UNORDERED = next(w for w in DEFAULT.workflows if not w.edges)


def test_a_quarter_of_the_bundled_workflows_have_no_dependency() -> None:
    assert sum(not w.edges for w in DEFAULT.workflows) >= len(DEFAULT.workflows) // 4


@pytest.mark.parametrize(
    "record",
    [
        {"edges": []},
        {"dependencies": {}},
        {"dependency_structure": {}},
        {"predecessors": {}},
        {"response": '{"edges": []}'},
        {"response": 'No step waits for another:\n```json\n{"dependencies": {}}\n```'},
        {"response": '{"dependency_structure": {}}'},
        {"response": '{"answer": {"dependency_structure": {}}}'},
    ],
)
def test_the_empty_structure_is_a_valid_prediction(record: dict[str, object]) -> None:
    row = score_prediction({"workflow": UNORDERED.id, "source": "m", **record}, DEFAULT)
    assert row.valid, row.reasons
    assert row.exact_match and row.order_match and row.edge_f1 == 1.0 and row.predicted_edges == []
    wrong = score_prediction({"workflow": "refund", **record}, SUITE)
    assert wrong.valid and wrong.edge_recall == 0.0 and not wrong.exact_match


@pytest.mark.parametrize(
    "value",
    [
        {D: [{"id": L}, {"step": F}, {"name": H}, P]},
        {"dependencies": {D: {"depends_on": [{"id": L}, {"id": F}, {"task": H}, {"id": P}]}}},
        [{"id": D, "depends_on": [{"id": L}, {"id": F}, {"id": H}, {"id": P}]}],
        {D: {"parents": [L, F, H, P]}},
    ],
)
def test_predecessors_given_as_objects_are_read(value: object) -> None:
    found = parse_structure(value, REFUND.index.keys())
    assert found is not None and not found.problems
    assert found.edges == {(L, D), (F, D), (H, D), (P, D)}


@pytest.mark.parametrize(
    "record",
    [
        {"dependencies": {D: [{"id": L}, {"why": "it needs the fraud score"}]}},
        {"dependencies": {D: [L, 4.5]}},
        {"dependencies": [{"id": D, "depends_on": [{"why": "?"}]}]},
        {"response": '{"dependency_structure": {"decide": [{"label": "lookup"}], "fraud_score": []}}'},
    ],
)
def test_predecessors_that_cannot_be_read_are_rejected_never_dropped(record: dict[str, object]) -> None:
    row = score_prediction({"workflow": "refund", **record}, SUITE)
    assert not row.valid and row.reason_kinds == ["parse"]
    assert "step 'decide': predecessors" in row.reasons[0], row.reasons


def test_score_prediction_records() -> None:
    row = score_prediction({"workflow": "refund", "source": "m", "edges": [[L, D], [D, L]]}, SUITE, line=3)
    assert row.valid and row.cyclic and row.line == 3 and row.reduction_f1 is None
    assert row.predicted_edges == [(D, L), (L, D)]
    bad = score_prediction({"workflow": "refund", "response": "I cannot."}, SUITE)
    assert not bad.valid and bad.reason_kinds == ["parse"]
    unknown = score_prediction({"workflow": "nope", "edges": []}, SUITE)
    assert unknown.reasons == ["workflow 'nope' is not in the suite"]
    neither = score_prediction({"workflow": "refund"}, SUITE)
    assert "the record has none of" in neither.reasons[0]
