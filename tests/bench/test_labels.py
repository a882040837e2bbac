"""Every simulator parameter is labelled, and a calibration target is a public figure, not
arithmetic of other targets."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.calibrate import TARGETS, targets  # noqa: E402

MEASURES = {"try1", "try2", "no_ratchet_worse", "edit_well_formed"}  # one figure each
MODEL = ROOT / "harness" / "data" / "sim_model.yaml"
SECTIONS = ("write", "fix", "review", "reply", "judge")


def _parameters(data: dict) -> set[str]:
    """Dotted paths of the parameters: each key under a section."""
    return {f"{section}.{key}" for section in SECTIONS for key in data[section]}


@pytest.fixture(scope="module")
def model() -> dict:
    """The shipped sim_model.yaml."""
    return yaml.safe_load(MODEL.read_text())


def test_every_parameter_has_a_label(model: dict) -> None:
    """Each parameter has exactly one label: calibrated, sourced or assumed, and no label
    names a parameter that does not exist."""
    labels = model["labels"]

    assert (set(), set()) == (_parameters(model) - set(labels), set(labels) - _parameters(model))
    assert all(row["label"] in {"calibrated", "sourced", "assumed"} for row in labels.values())


def test_each_label_carries_its_evidence(model: dict) -> None:
    """calibrated names fitted targets that exist; sourced cites a source; assumed says why,
    and a range's ends set only parameters that exist."""
    fitted = {row["target"] for row in targets() if row["kind"] == "fitted"}
    params = _parameters(model)
    wrong = []
    for name, row in model["labels"].items():
        if row["label"] == "calibrated" and not (
            row.get("targets") and set(row["targets"]) <= fitted
        ):
            wrong.append(name)
        if row["label"] == "sourced" and not row.get("source"):
            wrong.append(name)
        if row["label"] == "assumed" and not row.get("why"):
            wrong.append(name)
        for end in row.get("range", {}).values():
            wrong += [p for p in end if ".".join(p.split(".")[:2]) not in params]

    assert wrong == []


def test_every_fitted_target_pins_a_calibrated_parameter(model: dict) -> None:
    """A target the fit used is named by some calibrated parameter's label."""
    named = {t for row in model["labels"].values() for t in row.get("targets", [])}
    fitted = {row["target"] for row in targets() if row["kind"] == "fitted"}

    assert fitted - named == set()


def test_no_target_is_arithmetic_of_other_figures() -> None:
    """Every target measures one thing the simulator does (try 1, try 2, shipped worse), and
    its source quotes a figure, not a sum over figures (as the dropped `mid_try2_over_try1`,
    "51.6 / 22.2 = 2.32", was)."""
    arithmetic = re.compile(r"\d\s*[/÷×*+−-]\s*\d[\d.]*\s*=")
    rows = targets()

    assert [r["target"] for r in rows if r["measure"]["kind"] not in MEASURES] == []
    assert [r["target"] for r in rows if arithmetic.search(r["source"])] == []


def test_a_target_marked_derived_is_refused(tmp_path: Path) -> None:
    """A calibration row with `derived_from` makes the calibration refuse the file, naming it."""
    rows = yaml.safe_load(TARGETS.read_text())
    rows.append({**rows[0], "target": "ratio", "derived_from": ["a", "b"]})
    path = tmp_path / "calibration.yaml"
    path.write_text(yaml.safe_dump(rows))

    with pytest.raises(ValueError, match="derived from"):
        targets(path)
