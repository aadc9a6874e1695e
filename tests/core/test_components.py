"""core/components: a domain is a folder with a component.py; the engine orders, starts and stops them in stages."""

from __future__ import annotations

import sys
import textwrap

import pytest

from hausbox.config import Config
from hausbox.core.components import Component, discover, ordered
from hausbox.engine import Engine


def test_every_domain_folder_is_a_component_after_what_it_requires():
    components = discover()
    names = [c.name for c in components]
    assert {"auth", "devices", "equipments", "integrations", "recipes", "zones", "zonecontrol"} <= set(names)
    for index, component in enumerate(components):
        assert set(component.requires) <= set(names[:index]), component.name


def test_a_new_domain_is_a_folder_alone(tmp_path, monkeypatch):
    root = tmp_path / "house"
    for name, requires in (("lights", "()"), ("garden", '("lights",)'), ("tools", None)):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
        if requires is not None:
            (root / name / "component.py").write_text(textwrap.dedent(f"""
                from hausbox.core.components import Component
                COMPONENT = Component(name="{name}", requires={requires})
            """))
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert [c.name for c in discover("house")] == ["lights", "garden"]  # tools has no component
    finally:
        for module in [m for m in sys.modules if m == "house" or m.startswith("house.")]:
            del sys.modules[module]


def test_a_missing_or_circular_requirement_is_refused():
    with pytest.raises(RuntimeError, match="requires ghost"):
        ordered({"a": Component("a", requires=("ghost",))})
    with pytest.raises(RuntimeError, match="require each other"):
        ordered({"a": Component("a", requires=("b",)), "b": Component("b", requires=("a",))})


def test_stop_goes_in_stages_and_runs_queued_work_before_disconnecting(tmp_path):
    calls: list[str] = []

    def setup(engine: Engine) -> None:
        engine.probe = engine.workers.create("probe")

    probe = Component(
        "probe",
        requires=("recipes",),
        setup=setup,
        start=lambda engine: calls.append(f"start:{engine.state}"),
        stop=lambda engine: (calls.append("stop"), engine.probe.submit(calls.append, "queued job")),
        disconnect=lambda engine: calls.append("disconnect"),
        final_write=lambda engine: calls.append(f"final_write:{engine.state}"),
    )
    engine = Engine(Config(data_dir=tmp_path / "data", log_level="warn", mdns=False, bcrypt_rounds=4, strict_events=True), components=discover() + [probe])
    engine.start()
    assert engine.state == "running" and calls == ["start:starting"]
    engine.stop()
    assert calls == ["start:starting", "stop", "queued job", "disconnect", "final_write:final write"]
    assert engine.state == "closed"
