"""Resource plurals match kubebuilder's, which are flect's: flect's own test table must pass."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

import pytest

from pyscaffold_op.apimachinery.naming import flect_pluralize, pluralize

TABLE = Path(__file__).parent / "data" / "flect_plurals.tsv"


class Row(NamedTuple):
    singular: str
    plural: str


def pluralize_rows() -> list[Row]:
    lines = [line for line in TABLE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    reader = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    return [Row(row["singular"], row["plural"]) for row in reader if row["pluralize_test"] == "true"]


ROWS = pluralize_rows()


def test_the_table_is_flects_whole_pluralize_table() -> None:
    assert len(ROWS) == 210
    assert Row("status", "statuses") in ROWS and Row("salesperson", "salespeople") in ROWS


@pytest.mark.parametrize("row", ROWS, ids=[row.singular or "empty" for row in ROWS])
def test_flects_table(row: Row) -> None:
    assert flect_pluralize(row.singular) == row.plural
    assert flect_pluralize(row.plural) == row.plural  # a plural stays as it is


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("At", "ats"),
        ("Status", "statuses"),
        ("Cactus", "cacti"),
        ("Diagnosis", "diagnoses"),
        ("Salesperson", "salespeople"),
        ("Box", "boxes"),  # not "b" + "oxen": ox is a whole-word rule
        ("Endpoints", "endpoints"),
        ("CronJob", "cronjobs"),
        ("NetworkPolicy", "networkpolicies"),
        ("Ingress", "ingresses"),
        ("Database", "databases"),
        ("Memcached", "memcacheds"),
        ("Id", "ids"),
        # kubebuilder lower-cases the kind before flect sees it, so flect's word splitting never applies:
        ("WildOx", "wildoxes"),  # flect.Pluralize("WildOx") is "WildOxen"
        ("SmartPerson", "smartpeople"),
    ],
)
def test_kinds_kubebuilder_users_know(kind: str, plural: str) -> None:
    assert pluralize(kind) == plural
