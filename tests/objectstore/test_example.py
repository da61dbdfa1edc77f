"""examples/objectstore runs as its README says: CSV files → embedded → a JSON-lines file."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from omconnect.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "objectstore"


def test_the_csv_example_writes_every_row_as_typed_json(tmp_path, monkeypatch):
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "objectstore")
    monkeypatch.chdir(tmp_path)  # the example runs from the repository's root
    example = "examples/objectstore/"
    args = [example + "worker.properties", example + "csv-source.properties",
            example + "file-sink.properties", "--stop-when-idle", "2"]
    assert main(["standalone", *args]) == 0
    expected = []
    for path in sorted((EXAMPLE / "orders").glob("*.csv")):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                expected.append({
                    "order_id": int(row["order_id"]), "customer": row["customer"],
                    "sku": row["sku"], "quantity": int(row["quantity"]),
                    "price": float(row["price"]), "paid": row["paid"] == "true"})
    output = tmp_path / "objectstore-output.jsonl"
    assert [json.loads(line) for line in output.read_text().splitlines()] == expected
    # a second run reads nothing again: the offsets say every object is done
    assert main(["standalone", *args]) == 0
    assert len(output.read_text().splitlines()) == len(expected)
    readme = (EXAMPLE / "README.md").read_text()
    assert "omconnect standalone examples/objectstore/worker.properties" in readme
