import pytest

from hausbox.api.schema import (
    BOOLEAN,
    STRING,
    BodyValidator,
    array,
    nullable,
    obj,
    one_of,
    text,
)
from hausbox.core.errors import BadRequest

USER = BodyValidator(
    obj(
        required={"name": text(10)},
        optional={"role": one_of("admin", "standard"), "tags": array(STRING), "note": nullable(STRING), "on": BOOLEAN},
    )
)


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "name is required"),
        ([], "body must be an object"),
        ({"name": 3}, "name must be a string"),
        ({"name": "   "}, "name must not be empty"),
        ({"name": "x" * 11}, "name must be at most 10 characters"),
        ({"name": "a", "role": "root"}, "role must be one of admin, standard"),
        ({"name": "a", "tags": ["ok", 2]}, "tags[1] must be a string"),
        ({"name": "a", "note": 5}, "note must be a string"),
        ({"name": "a", "on": "yes"}, "on must be a boolean"),
    ],
)
def test_errors_name_the_field(body, message):
    with pytest.raises(BadRequest) as caught:
        USER.validate(body)
    assert caught.value.message == message


def test_unknown_fields_are_dropped_and_known_ones_kept():
    assert USER.validate({"name": "a", "note": None, "extra": 1}) == {"name": "a", "note": None}


def test_free_form_objects_keep_every_key():
    free = BodyValidator({"type": "object", "additionalProperties": {"type": "string"}})
    assert free.validate({"a.b": "1"}) == {"a.b": "1"}
    with pytest.raises(BadRequest) as caught:
        free.validate({"a.b": 1})
    assert caught.value.message == "a.b must be a string"


def test_every_route_body_is_a_valid_json_schema():
    from jsonschema import Draft202012Validator

    from hausbox.api.routing import all_routes

    for route in all_routes():
        if route.body is not None:
            Draft202012Validator.check_schema(route.body)
