"""Every rule and example of the peer's typed schema evolution, case by case, over HTTP."""

from __future__ import annotations

from http_helpers import sql
from typed_helpers import batches, column_values, evolved_columns, typed_table

TS = "2026-01-01T00:00:00Z"
TS_NS = 1_767_225_600_000_000_000


def ts(ns: int) -> str:
    """A timestamp as the JSON answer renders it."""
    import datetime

    seconds, frac = divmod(ns, 1_000_000_000)
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"


def test_first_sight_takes_its_inferred_type(client) -> None:
    typed_table(client)
    batches(client, [{"n": 4, "x": 2.5, "ok": True, "s": "hi", "at": TS, "v": [1, 2]}])
    assert evolved_columns(client) == {
        "n": ("long", None),
        "x": ("real", None),
        "ok": ("bool", None),
        "s": ("string", None),
        "at": ("timestamp", None),
        "v": ("array(long)", None),
    }
    assert column_values(client) == [
        {"n": 4, "x": 2.5, "ok": True, "s": "hi", "at": ts(TS_NS), "v": [1, 2]}
    ]


def test_first_sight_takes_the_largest_dimension(client) -> None:
    """Rule 1: a field first seen as [][][] is a three-dimensional array."""
    typed_table(client)
    batches(client, [{"a": [[[1]], [[2, 3]]]}])
    assert evolved_columns(client) == {"a": ("array(array(array(long)))", None)}


def test_size_then_double_adds_size_double(client) -> None:
    """Rule 6: size=4, then size=2.3 in a later batch: size_double, evolved_from size."""
    typed_table(client)
    batches(client, [{"size": 4}], [{"size": 2.3}])
    assert evolved_columns(client) == {"size": ("long", None), "size_double": ("real", "size")}
    assert column_values(client) == [{"size": 4}, {"size_double": 2.3}]


def test_narrower_value_converts_into_the_wider_column(client) -> None:
    """Rule 2: a long arriving at a string field is stored as text, no new column."""
    typed_table(client)
    batches(client, [{"a": "x"}], [{"a": 5, "b": 1.5}], [{"b": 7}])
    assert evolved_columns(client) == {"a": ("string", None), "b": ("real", None)}
    assert column_values(client) == [{"a": "x"}, {"a": "5", "b": 1.5}, {"b": 7.0}]


def test_non_convertible_type_adds_string_and_exact_columns(client) -> None:
    """Rule 3: a::boolean exists, a date/time arrives: a_string and a_timestamp."""
    typed_table(client)
    batches(client, [{"a": True}], [{"a": TS}], [{"a": False}])
    assert evolved_columns(client) == {
        "a": ("bool", None),
        "a_timestamp": ("timestamp", "a"),
        "a_string": ("string", "a"),
    }
    assert column_values(client) == [
        {"a": True},
        {"a_timestamp": ts(TS_NS), "a_string": TS},
        {"a": False, "a_string": "false"},  # every primitive also reaches the string column
    ]


def test_existing_field_keeps_its_name_records_arrays_primitives(client) -> None:
    """Rule 4: whatever came first keeps the name; then records > arrays > primitives."""
    typed_table(client)
    batches(client, [{"a": 1}], [{"a": {"k": 1}}])
    assert evolved_columns(client) == {"a": ("long", None), "a_record.k": ("long", "a.k")}
    typed_table(client, "u")
    batches(client, [{"a": 1}, {"a": [2]}, {"a": {"k": "v"}}], table="u")
    assert evolved_columns(client, "u") == {
        "a_long": ("long", "a"),
        "a_array_long": ("array(long)", "a"),
        "a.k": ("string", None),
    }


def test_suffix_names_carry_type_and_dimension(client) -> None:
    """Rule 5: coordinates[][][]:bigint arriving at a string field is coordinates_array3_long."""
    typed_table(client)
    batches(client, [{"coordinates": "n/a"}], [{"coordinates": [[[1, 2]]]}])
    assert evolved_columns(client)["coordinates_array3_long"] == (
        "array(array(array(long)))",
        "coordinates",
    )


def test_values_route_to_exact_and_every_wider_field(client) -> None:
    """Rule 7: long, date, string, date[], string[]: every value reaches string[]."""
    typed_table(client)
    batches(client, [{"f": 1}], [{"f": TS}], [{"f": "x"}], [{"f": [TS]}], [{"f": ["y"]}])
    columns = evolved_columns(client)
    assert columns["f_array_string"] == ("array(string)", "f")
    assert columns["f_array_timestamp"] == ("array(timestamp)", "f")
    # from now on every one of the five reaches string[] (rows are never rewritten)
    batches(client, [{"f": 2}, {"f": TS}, {"f": "x"}, {"f": [TS]}, {"f": ["y"]}])
    rows = column_values(client)[-5:]
    assert [r["f_array_string"] for r in rows] == [["2"], [TS], ["x"], [TS], ["y"]]
    # a long also reaches the timestamp[] column: the peer's long-into-timestamp routing
    assert rows[0] == {"f": 2, "f_string": "2", "f_array_string": ["2"]} | {
        "f_array_timestamp": [ts(2).replace("T", " ")]
    }


def test_edge_case_long_and_double_together_is_double_only(client) -> None:
    """Edge case #1."""
    typed_table(client)
    batches(client, [{"x": 1}, {"x": 2.5}])
    assert evolved_columns(client) == {"x": ("real", None)}
    assert column_values(client) == [{"x": 1.0}, {"x": 2.5}]


def test_edge_case_long_too_big_for_double_keeps_a_long_column(client) -> None:
    """No value loses precision: 2**60 + 1 is not a double, so it keeps x_long."""
    typed_table(client)
    batches(client, [{"x": 2**60 + 1}, {"x": 2.5}])
    assert evolved_columns(client) == {"x_long": ("long", "x"), "x": ("real", None)}
    assert column_values(client)[0] == {"x_long": 2**60 + 1}


def test_edge_case_timestamp_then_long(client) -> None:
    """Edge case #2: started is a timestamp, then a long: started_long, and started too."""
    typed_table(client)
    batches(client, [{"started": TS}], [{"started": 5}])
    assert evolved_columns(client) == {
        "started": ("timestamp", None),
        "started_long": ("long", "started"),
    }
    assert column_values(client)[1] == {"started": ts(5), "started_long": 5}


def test_edge_case_long_then_timestamp_converts(client) -> None:
    """Edge case #2, not vice versa: a timestamp converts into an existing long field."""
    typed_table(client)
    batches(client, [{"started": 5}], [{"started": TS}])
    assert evolved_columns(client) == {"started": ("long", None)}
    assert column_values(client)[1] == {"started": TS_NS}


def test_edge_case_timestamp_and_long_together_are_two_fields(client) -> None:
    typed_table(client)
    batches(client, [{"started": TS}, {"started": 5}])
    assert evolved_columns(client) == {
        "started_timestamp": ("timestamp", "started"),
        "started": ("long", None),
    }


def test_widest_type_table(client) -> None:
    """The reference table, one existing type (row) against one new type (column)."""
    values = {"boolean": True, "long": 7, "double": 1.5, "timestamp": TS, "string": "s"}
    kyma = {"boolean": "bool", "long": "long", "double": "real"}
    kyma |= {"timestamp": "timestamp", "string": "string"}
    # new type → the columns it adds to a field that has the existing type
    expected = {
        ("boolean", "long"): ["f_long"],
        ("boolean", "double"): ["f_double"],
        ("boolean", "timestamp"): ["f_timestamp", "f_string"],
        ("boolean", "string"): ["f_string"],
        ("long", "boolean"): [],
        ("long", "double"): ["f_double"],
        ("long", "timestamp"): [],
        ("long", "string"): ["f_string"],
        ("double", "boolean"): [],
        ("double", "long"): [],
        ("double", "timestamp"): ["f_timestamp", "f_string"],
        ("double", "string"): ["f_string"],
        ("timestamp", "boolean"): ["f_boolean", "f_string"],
        ("timestamp", "long"): ["f_long"],
        ("timestamp", "double"): ["f_double", "f_string"],
        ("timestamp", "string"): ["f_string"],
        ("string", "boolean"): [],
        ("string", "long"): [],
        ("string", "double"): [],
        ("string", "timestamp"): [],
    }
    for n, ((old, new), added) in enumerate(expected.items()):
        table = f"w{n}"
        typed_table(client, table)
        batches(client, [{"f": values[old]}], [{"f": values[new]}], table=table)
        columns = evolved_columns(client, table)
        assert columns.pop("f") == (kyma[old], None), (old, new)
        assert list(columns) == added, (old, new)


def test_example_1_array_then_string(client) -> None:
    typed_table(client)
    batches(client, [{"a": [1, 2]}], [{"a": "x"}], [{"a": 5}, {"a": [6]}, {"a": True}])
    assert evolved_columns(client) == {
        "a": ("array(long)", None),
        "a_string": ("string", "a"),
        "a_array_string": ("array(string)", "a"),
    }
    assert column_values(client) == [
        {"a": [1, 2]},
        {"a_string": "x", "a_array_string": ["x"]},
        {"a": [5], "a_string": "5", "a_array_string": ["5"]},
        {"a": [6], "a_array_string": ["6"]},
        {"a": [1], "a_string": "true", "a_array_string": ["true"]},
    ]


def test_example_2_largest_dimension_takes_the_name(client) -> None:
    typed_table(client)
    batches(
        client,
        [
            {"a": {"b": "s"}},
            {"a": {"b": ["s"]}},
            {"a": {"b": [["s"]]}},
            {"a": {"b": [[["s"]]]}},
        ],
    )
    assert evolved_columns(client) == {
        "a.b_string": ("string", "a.b"),
        "a.b_array_string": ("array(string)", "a.b"),
        "a.b_array2_string": ("array(array(string))", "a.b"),
        "a.b": ("array(array(array(string)))", None),
    }
    assert sql(client, 'SELECT "a.b" FROM t')["rows"] == [[[[["s"]]]]] * 4


def test_example_3_widest_type_accepts_all(client) -> None:
    typed_table(client)
    batches(client, [{"a": {"b": True}}, {"a": {"b": 1}}, {"a": {"b": 1.5}}])
    assert evolved_columns(client) == {"a.b_boolean": ("bool", "a.b"), "a.b": ("real", None)}
    assert column_values(client) == [
        {"a.b_boolean": True, "a.b": 1.0},
        {"a.b": 1.0},
        {"a.b": 1.5},
    ]


def test_example_4_records_in_arrays(client) -> None:
    typed_table(client)
    batches(
        client,
        [
            {"a": {"b": {"c": "1"}}},
            {"a": {"b": [{"x": "2"}]}},
            {"a": {"b": [[{"y": "3"}]]}},
            {"a": {"b": [[[{"z": "4"}]]]}},
        ],
    )
    array3 = "array(array(array(string)))"
    assert evolved_columns(client) == {
        "a.b_record.c": ("string", "a.b.c"),
        "a.b.c": (array3, None),
        "a.b.x": (array3, None),
        "a.b.y": (array3, None),
        "a.b.z": (array3, None),
        "a.b_array_record.x": ("array(string)", "a.b.x"),
        "a.b_array2_record.y": ("array(array(string))", "a.b.y"),
    }
    rows = sql(client, 'SELECT "a.b.c", "a.b.x", "a.b_record.c" FROM t ORDER BY _timestamp')
    assert rows["rows"][0] == [[[["1"]]], [[[None]]], "1"]
    assert rows["rows"][1] == [[[[None]]], [[["2"]]], None]


def test_declared_columns_come_first(client) -> None:
    """A column defined at CREATE TABLE precedes anything detected."""
    typed_table(client, columns="a string, n int")
    batches(client, [{"a": 5, "n": 3}], [{"n": 2**40}])
    assert evolved_columns(client) == {
        "a": ("string", None),
        "n": ("int", None),
        "n_long": ("long", "n"),
    }
    assert column_values(client) == [{"a": "5", "n": 3}, {"n_long": 2**40}]


def test_unsafe_names_and_ragged_arrays_lose_nothing(client) -> None:
    typed_table(client)
    batches(client, [{"User": 1, "r": [1, [2]], "m": {"Bad-Key": 1}}])
    assert column_values(client) == [{"props": {"User": 1}, "r": "[1,[2]]", "m": '{"Bad-Key":1}'}]


def test_string_mode_stays_the_default(client) -> None:
    sql(client, "CREATE TABLE s (x long)")
    batches(client, [{"n": 4, "o": {"k": 1}}], table="s")
    assert evolved_columns(client, "s") == {
        "x": ("long", None),
        "n": ("string", None),
        "o": ("string", None),
    }
