"""Converter throughput: records/s through from_connect_batch and to_connect_batch.

Converts N records (default 100,000) of two shapes, each way, with the JSON converter
(schemas enabled, schemas disabled) and the Avro converter, in batches of 1,000 as the
runtime hands them over:

* ``small``: a struct of 5 fields (int64, string, float64, boolean, optional string);
* ``nested``: an order with a Decimal, a Timestamp, an array, a map and a nested struct.

Then the JSON converter's string column form (the columnar path's source side): N strings
of 100 characters with a required string schema, through ``from_connect_batch`` and
through ``serialize_column`` on Arrow columns of 1,000, schemas enabled, and their bytes
back through ``to_connect_batch`` and ``deserialize_column``. And its struct column form:
the ``small`` shape's N rows as Arrow ``struct`` columns of 1,000 through
``serialize_column``, schemas enabled and disabled, against ``from_connect_batch`` of
the same rows, and (schemas enabled) their bytes read back with ``deserialize_column``
against ``to_connect_batch`` plus the Arrow column the runtime builds from the values.

Each figure is the best of ``--repeat`` runs, in records per second of wall clock and per
second of the process's CPU time (steadier when the machine is shared). The last line is
one JSON object with every figure.

    python benchmarks/converters.py [--records 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

from omconnect.converters import AvroConverter, Converter, JsonConverter
from omconnect.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
    Struct,
    decimal_schema,
    timestamp_schema,
)

BATCH = 1000

SMALL = (SchemaBuilder.struct().name("bench.Small")
         .field("id", INT64_SCHEMA)
         .field("name", STRING_SCHEMA)
         .field("amount", FLOAT64_SCHEMA)
         .field("active", BOOLEAN_SCHEMA)
         .field("note", OPTIONAL_STRING_SCHEMA)
         .build())

ADDRESS = (SchemaBuilder.struct().name("bench.Address")
           .field("street", STRING_SCHEMA).field("city", STRING_SCHEMA).build())
NESTED = (SchemaBuilder.struct().name("bench.Order")
          .field("id", INT64_SCHEMA)
          .field("price", decimal_schema(2))
          .field("placed", timestamp_schema())
          .field("tags", SchemaBuilder.array(STRING_SCHEMA).build())
          .field("counts", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build())
          .field("ship_to", ADDRESS)
          .build())


def small(i: int) -> Struct:
    return Struct.from_values(SMALL, [i, f"user-{i}", i * 0.25, i % 2 == 0,
                                      None if i % 3 else "vip"])


def nested(i: int) -> Struct:
    return Struct.from_values(NESTED, [
        i,
        decimal.Decimal(i).scaleb(-2),
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
        ["a", "b", "c"],
        {"x": i % 7, "y": 1},
        Struct.from_values(ADDRESS, [f"{i} Main St", "Springfield"]),
    ])


def best_rate(records: int, repeat: int, run: Callable[[], Any]) -> tuple[float, float, Any]:
    """Records per second of the fastest of ``repeat`` runs: by wall clock, and by the
    process's CPU time (steadier on a machine shared with other work).
    """
    best_wall, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return records / best_wall, records / max(best_cpu, 1e-9), result


def measure(converter: Converter, schema: Schema, values: list[Struct], repeat: int,
            *, schemaless: bool = False) -> dict[str, float]:
    items = [(schema, value) for value in values]
    batches = [items[i:i + BATCH] for i in range(0, len(items), BATCH)]

    def write() -> list[bytes | None]:
        out: list[bytes | None] = []
        for batch in batches:
            out.extend(converter.from_connect_batch("bench", batch))
        return out

    write_wall, write_cpu, encoded = best_rate(len(items), repeat, write)
    encoded_batches = [encoded[i:i + BATCH] for i in range(0, len(encoded), BATCH)]

    def read() -> int:
        count = 0
        for batch in encoded_batches:
            count += len(converter.to_connect_batch("bench", batch))
        return count

    read_wall, read_cpu, _ = best_rate(len(items), repeat, read)
    if not schemaless:
        first = converter.to_connect("bench", encoded[0]).value
        assert first == values[0], f"round trip changed the value: {first!r}"
    size = sum(len(e) for e in encoded if e) / len(encoded)
    return {"to_bytes_per_s": write_wall, "from_bytes_per_s": read_wall,
            "to_bytes_per_cpu_s": write_cpu, "from_bytes_per_cpu_s": read_cpu,
            "bytes_per_record": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    def converter(cls: type[Converter], **config: Any) -> Converter:
        instance = cls()
        instance.configure(config, False)
        return instance

    setups = {
        "json": lambda: converter(JsonConverter),
        "json_schemaless": lambda: converter(JsonConverter, **{"schemas.enable": False}),
        "avro": lambda: converter(AvroConverter),
    }
    shapes = {"small": (SMALL, small), "nested": (NESTED, nested)}
    figures: dict[str, Any] = {
        "benchmark": "converters", "records": args.records, "batch": BATCH,
        "python": platform.python_version(),
    }
    print(f"{args.records:,} records per run, batches of {BATCH}, best of {args.repeat}; "
          "records/s by wall clock (and per CPU second)")
    print(f"{'converter':<17}{'shape':<8}{'to bytes/s':>22}{'from bytes/s':>22}{'bytes':>7}")
    for shape_name, (schema, make) in shapes.items():
        values = [make(i) for i in range(args.records)]
        for setup_name, setup in setups.items():
            # A schemaless read gives dicts, not the structs written: no equality check.
            result = measure(setup(), schema, values, args.repeat,
                             schemaless=setup_name == "json_schemaless")
            for name, figure in result.items():
                figures[f"{setup_name}_{shape_name}_{name}"] = round(figure, 1)
            to_bytes = f"{result['to_bytes_per_s']:,.0f} ({result['to_bytes_per_cpu_s']:,.0f})"
            from_bytes = (f"{result['from_bytes_per_s']:,.0f} "
                          f"({result['from_bytes_per_cpu_s']:,.0f})")
            print(f"{setup_name:<17}{shape_name:<8}{to_bytes:>22}{from_bytes:>22}"
                  f"{result['bytes_per_record']:>7.0f}")
            sys.stdout.flush()
    figures.update(measure_string_column(args.records, args.repeat))
    figures.update(measure_struct_column(args.records, args.repeat))
    print(json.dumps(figures))


def measure_struct_column(records: int, repeat: int) -> dict[str, float]:
    """The ``small`` rows through the JSON converter: per record, and as struct columns."""
    import pyarrow as pa

    figures: dict[str, float] = {}
    values = [small(i) for i in range(records)]
    arrow = pa.struct([pa.field("id", pa.int64(), False), pa.field("name", pa.string(), False),
                       pa.field("amount", pa.float64(), False),
                       pa.field("active", pa.bool_(), False), ("note", pa.string())])
    columns = [pa.array([v.to_dict() for v in values[i:i + BATCH]], arrow)
               for i in range(0, records, BATCH)]
    for schemas in (True, False):
        json_converter = JsonConverter()
        json_converter.configure({"schemas.enable": schemas}, is_key=False)
        items = [(SMALL, v) for v in values]

        def per_record(converter: JsonConverter = json_converter,
                       items: list[Any] = items) -> list[bytes | None]:
            return [b for i in range(0, records, BATCH)
                    for b in converter.from_connect_batch("bench", items[i:i + BATCH])]

        def per_column(converter: JsonConverter = json_converter) -> list[Any]:
            return [converter.serialize_column("bench", column, SMALL) for column in columns]

        record_wall, record_cpu, expected = best_rate(records, repeat, per_record)
        column_wall, column_cpu, got = best_rate(records, repeat, per_column)
        assert [b for column in got for b in column.to_pylist()] == expected
        name = "json" if schemas else "json_schemaless"
        print(f"{name + ' struct':<17} {'record':<8}{record_wall:>14,.0f} ({record_cpu:,.0f})")
        print(f"{name + ' struct':<17} {'column':<8}{column_wall:>14,.0f} ({column_cpu:,.0f})")
        figures[f"{name}_struct_records_to_bytes_per_s"] = round(record_wall, 1)
        figures[f"{name}_struct_column_to_bytes_per_s"] = round(column_wall, 1)
        figures[f"{name}_struct_column_to_bytes_per_cpu_s"] = round(column_cpu, 1)
        if schemas:
            figures.update(measure_struct_reads(json_converter, records, repeat, got))
    return figures


def measure_struct_reads(converter: JsonConverter, records: int, repeat: int,
                         written: list[Any]) -> dict[str, float]:
    """The ``small`` rows' envelopes read back into what ``put_batch`` gets: per record
    (``to_connect_batch``, then the Arrow column the runtime builds from the values) and
    with ``deserialize_column``.
    """
    from omconnect.columnar.records import sink_records_to_batch
    from omconnect.records import SinkRecord

    def per_record() -> list[Any]:
        out = []
        for column in written:
            values = converter.to_connect_batch("bench", column.to_pylist())
            out.append(sink_records_to_batch([
                SinkRecord(topic="bench", partition=0, value_schema=read.schema,
                           value=read.value, offset=n)
                for n, read in enumerate(values)]).column(5))
        return out

    def per_column() -> list[Any]:
        return [converter.deserialize_column("bench", column) for column in written]

    record_wall, record_cpu, expected = best_rate(records, repeat, per_record)
    column_wall, column_cpu, got = best_rate(records, repeat, per_column)
    assert [c.to_pylist() for c in got] == [c.to_pylist() for c in expected]
    print(f"{'json struct read':<17} {'record':<8}{record_wall:>14,.0f} ({record_cpu:,.0f})")
    print(f"{'json struct read':<17} {'column':<8}{column_wall:>14,.0f} ({column_cpu:,.0f})")
    return {"json_struct_records_from_bytes_per_s": round(record_wall, 1),
            "json_struct_column_from_bytes_per_s": round(column_wall, 1),
            "json_struct_column_from_bytes_per_cpu_s": round(column_cpu, 1)}


def measure_string_column(records: int, repeat: int) -> dict[str, float]:
    """Strings through the JSON converter: per item, and as Arrow columns."""
    import pyarrow as pa

    json_converter = JsonConverter()
    json_converter.configure({}, False)
    lines = [f"{i:08d} " + "x" * 91 for i in range(records)]
    batches = [lines[i:i + BATCH] for i in range(0, records, BATCH)]
    columns = [pa.array(batch, pa.string()) for batch in batches]

    def per_item() -> list[bytes | None]:
        out: list[bytes | None] = []
        for batch in batches:
            out += json_converter.from_connect_batch("bench", [(STRING_SCHEMA, v)
                                                               for v in batch])
        return out

    def per_column() -> list[Any]:
        return [json_converter.serialize_column("bench", column, STRING_SCHEMA)
                for column in columns]

    item_wall, item_cpu, expected = best_rate(records, repeat, per_item)
    column_wall, column_cpu, got = best_rate(records, repeat, per_column)
    assert [b for column in got for b in column.to_pylist()] == expected

    def read_items() -> list[Any]:
        return [v.value for column in got
                for v in json_converter.to_connect_batch("bench", column.to_pylist())]

    def read_columns() -> list[Any]:
        return [json_converter.deserialize_column("bench", column) for column in got]

    read_item_wall, read_item_cpu, _ = best_rate(records, repeat, read_items)
    read_column_wall, read_column_cpu, read = best_rate(records, repeat, read_columns)
    assert [v for column in read for v in column.to_pylist()] == lines
    print(f"{'json string':<17}{'item':<8}{item_wall:>14,.0f} ({item_cpu:,.0f})"
          f"{read_item_wall:>14,.0f} ({read_item_cpu:,.0f})")
    print(f"{'json string':<17}{'column':<8}{column_wall:>14,.0f} ({column_cpu:,.0f})"
          f"{read_column_wall:>14,.0f} ({read_column_cpu:,.0f})")
    return {"json_string_item_to_bytes_per_s": round(item_wall, 1),
            "json_string_column_to_bytes_per_s": round(column_wall, 1),
            "json_string_item_to_bytes_per_cpu_s": round(item_cpu, 1),
            "json_string_column_to_bytes_per_cpu_s": round(column_cpu, 1),
            "json_string_item_from_bytes_per_s": round(read_item_wall, 1),
            "json_string_column_from_bytes_per_s": round(read_column_wall, 1),
            "json_string_item_from_bytes_per_cpu_s": round(read_item_cpu, 1),
            "json_string_column_from_bytes_per_cpu_s": round(read_column_cpu, 1)}


if __name__ == "__main__":
    main()
