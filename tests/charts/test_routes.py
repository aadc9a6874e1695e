"""/charts over real HTTP: CRUD, config validation, access."""

from __future__ import annotations

import pytest

CONFIG = {"series": [{"equipmentId": "e-1", "alias": "temperature", "color": "#ff8800"}, {"equipmentId": "e-2", "alias": "power"}], "timeRange": "24h", "yAxisFit": True}


def test_create_read_update_delete(home):
    created = home.admin.post("/charts", {"name": " Living room ", "config": CONFIG, "extra": 1})
    assert created.status_code == 201, created.text
    chart = created.json()
    assert set(chart) == {"id", "name", "config", "createdAt", "updatedAt"}
    assert chart["name"] == "Living room" and chart["config"] == CONFIG
    assert home.admin.get(f"/charts/{chart['id']}").json() == chart
    assert chart["id"] in [c["id"] for c in home.admin.get("/charts").json()]

    renamed = home.admin.put(f"/charts/{chart['id']}", {"name": "Salon"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Salon" and renamed.json()["config"] == CONFIG
    reconfigured = home.admin.put(f"/charts/{chart['id']}", {"config": {"series": [], "yAxisFit": False}}).json()
    assert reconfigured["config"] == {"series": [], "yAxisFit": False} and reconfigured["name"] == "Salon"
    unchanged = home.admin.put(f"/charts/{chart['id']}", {})
    assert unchanged.status_code == 200 and unchanged.json() == reconfigured

    assert home.admin.delete(f"/charts/{chart['id']}").status_code == 204
    for response in (home.admin.get(f"/charts/{chart['id']}"), home.admin.put(f"/charts/{chart['id']}", {"name": "x"}), home.admin.delete(f"/charts/{chart['id']}")):
        assert response.status_code == 404 and response.json()["error"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": "No config"},
        {"config": {}},
        {"name": "", "config": {}},
        {"name": 5, "config": {}},
        {"name": "x", "config": None},
        {"name": "x", "config": [1, 2]},
        {"name": "x", "config": "series"},
        {"name": "x", "config": {"yAxisFit": "yes"}},
        {"name": "x", "config": {"yAxisFit": 1}},
        {"name": "x", "config": {"series": [{"color": 7}]}},
        {"name": "x", "config": {"series": [{"alias": "t"}, {"color": ["red"]}]}},
        {"name": "x", "config": {"series": [3]}},
        {"name": "x", "config": {"series": {"color": "red"}}},
    ],
    ids=repr,
)
def test_bad_bodies_are_refused(home, body):
    before = home.admin.get("/charts").json()
    response = home.admin.post("/charts", body)
    assert response.status_code == 400, response.text
    assert isinstance(response.json()["error"], str)
    assert home.admin.get("/charts").json() == before


def test_bad_updates_are_refused_and_change_nothing(home):
    chart = home.admin.post("/charts", {"name": "Keep", "config": {"keep": True}}).json()
    for body in ({"name": ""}, {"name": None}, {"config": None}, {"config": {"yAxisFit": "no"}}, {"config": {"series": [{"color": False}]}}):
        assert home.admin.put(f"/charts/{chart['id']}", body).status_code == 400, body
    assert home.admin.get(f"/charts/{chart['id']}").json() == chart


def test_the_error_names_the_member(home):
    response = home.admin.post("/charts", {"name": "x", "config": {"series": [{"color": "red"}, {"color": 1}]}})
    assert response.json() == {"error": "config.series[1].color must be a string"}
    response = home.admin.post("/charts", {"name": "x", "config": {"yAxisFit": "true"}})
    assert response.json() == {"error": "config.yAxisFit must be a boolean"}


def test_a_standard_user_reads_charts_but_may_not_change_them(home):
    chart = home.admin.post("/charts", {"name": "Shared", "config": {}}).json()
    _, standard = home.new_user("standard")
    assert standard.get("/charts").status_code == 200
    assert standard.get(f"/charts/{chart['id']}").json() == chart
    for response in (standard.post("/charts", {"name": "Mine", "config": {}}), standard.put(f"/charts/{chart['id']}", {"name": "Mine"}), standard.delete(f"/charts/{chart['id']}")):
        assert response.status_code == 403 and response.json() == {"error": "Admin access required"}
