"""The update helper's parts without real releases: the wheelhouse checks, the links, the boot-time
recovery of an update a power cut interrupted."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hausbox.updater import artifact, layout
from hausbox.updater.run import recover
from hausbox.updater.state import read_json, write_json
from tests.updater.release_host import ReleaseHost


def wheelhouse(*entries: tuple[str, bytes], link: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in entries:
            archive.writestr(name, content)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize(
    "entries, link, why",
    [
        ([("../evil.whl", b"x")], None, "not a wheel at the top level"),
        ([("/abs.whl", b"x")], None, "not a wheel at the top level"),
        ([("deps/a.whl", b"x")], None, "not a wheel at the top level"),
        ([("setup.py", b"x")], None, "not a wheel at the top level"),
        ([("a.whl", b"x")], "b.whl", "'b.whl' is a link or a special file"),
        ([("a.whl", b"x"), ("a.whl", b"y")], None, "given twice"),
        ([], None, "holds no wheel"),
    ],
)
@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_wheelhouse_that_could_escape_or_is_not_one_is_refused(tmp_path, entries, link, why):
    path = tmp_path / "w.zip"
    path.write_bytes(wheelhouse(*entries, link=link))
    with pytest.raises(artifact.ArtifactError, match=why):
        artifact.unpack(path, tmp_path / "out")
    assert not (tmp_path / "evil.whl").exists() and not list((tmp_path / "out").iterdir())


def test_a_good_wheelhouse_unpacks_flat(tmp_path):
    path = tmp_path / "w.zip"
    path.write_bytes(wheelhouse(("a-1-py3-none-any.whl", b"a"), ("b-2-py3-none-any.whl", b"b")))
    assert artifact.unpack(path, tmp_path / "out") == ["a-1-py3-none-any.whl", "b-2-py3-none-any.whl"]
    assert (tmp_path / "out" / "b-2-py3-none-any.whl").read_bytes() == b"b"


def test_a_download_is_bounded_and_checked_before_use(tmp_path):
    host = ReleaseHost()
    try:
        data = b"0123456789"
        host.files["/files/a.zip"] = data
        url = host.url + "/files/a.zip"
        with pytest.raises(artifact.ArtifactError, match="larger than the 4 bytes"):
            artifact.download(url, tmp_path / "a", 4)
        with pytest.raises(artifact.ArtifactError, match="not the 20 announced"):
            artifact.download(url, tmp_path / "a", 20)
        with pytest.raises(artifact.ArtifactError, match="answered 404"):
            artifact.download(host.url + "/files/missing.zip", tmp_path / "a", 20)
        assert artifact.download(url, tmp_path / "a", 10) == hashlib.sha256(data).hexdigest()
        artifact.verify(tmp_path / "a", {"size": 10, "sha256": hashlib.sha256(data).hexdigest()})
        with pytest.raises(artifact.ArtifactError, match="sha256 mismatch"):
            artifact.verify(tmp_path / "a", {"size": 10, "sha256": "0" * 64})
    finally:
        host.close()


def install_root(tmp_path: Path, *versions: str) -> Path:
    root = tmp_path / "install"
    for version in versions:
        layout.release_dir(root, version).mkdir(parents=True)
        layout.mark_complete(root, version)
    return root


def test_links_switch_atomically_and_prune_keeps_current_and_previous(tmp_path):
    root = install_root(tmp_path, "1.0.0", "1.1.0", "1.2.0")
    layout.release_dir(root, "1.3.0").mkdir()  # a cut in the middle of an install
    layout.switch(root, "current", "1.1.0")
    layout.switch(root, "previous", "1.0.0")
    layout.switch(root, "current", "1.2.0")
    assert os.readlink(root / "current") == "releases/1.2.0" and layout.linked_version(root, "previous") == "1.0.0"
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no temporary link left
    layout.remove_incomplete(root, "1.3.0")
    assert not layout.release_dir(root, "1.3.0").exists()
    assert layout.prune(root) == ["1.1.0"]
    with pytest.raises(ValueError):
        layout.release_dir(root, "../../etc")


def test_an_interrupted_update_is_rolled_back_at_boot(tmp_path):
    root = install_root(tmp_path, "1.0.0", "1.1.0")
    layout.switch(root, "current", "1.1.0")  # the cut came after the switch, before health
    data = tmp_path / "data"
    write_json(data / "update" / "job.json", {"id": "a", "kind": "update", "from": "1.0.0", "to": "1.1.0"})
    write_json(data / "update" / "state.json", {"id": "a", "kind": "update", "pid": 2**22 + 7, "step": "health", "done": False, "steps": []})
    message = recover(data, root)
    assert "interrupted at step health" in message and layout.linked_version(root) == "1.0.0"
    state = read_json(data / "update" / "state.json")
    assert state["done"] is True and state["ok"] is False and state["steps"][-1]["step"] == "failed"
    assert recover(data, root) == "nothing to recover"  # once recorded, never again
    assert layout.linked_version(root) == "1.0.0"


def test_the_helper_imports_nothing_of_the_engine():
    # A broken release must not break the helper that rolls it back: stdlib and requests only.
    probe = "import sys, hausbox.updater.__main__; print(' '.join(sorted(m for m in sys.modules if '.' not in m or m.startswith('hausbox'))))"
    done = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.split())
    assert {m for m in modules if m.startswith("hausbox")} <= {"hausbox", "hausbox.updater", "hausbox.updater.__main__", "hausbox.updater.run",
                                                             "hausbox.updater.state", "hausbox.updater.layout", "hausbox.updater.artifact"}  # fmt: skip
    assert not modules & {"gevent", "pony", "bottle", "jsonschema", "orjson", "zeroconf", "paho"}


RECOVER_SCRIPT = Path(__file__).resolve().parents[2] / "buildroot-overlay" / "usr" / "lib" / "hausbox" / "recover"


def _recover_at_boot(data: Path, root: Path) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "HAUSBOX_DATA_DIR": str(data), "HAUSBOX_INSTALL_ROOT": str(root)}
    return subprocess.run(["sh", str(RECOVER_SCRIPT)], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="the image's script reads the job with /usr/bin/python3")
def test_the_boot_time_recovery_starts_no_release_for_an_attempt_that_ended(tmp_path):
    root = tmp_path / "install"  # no release at all: starting one would fail loudly
    data = tmp_path / "data"
    write_json(data / "update" / "job.json", {"id": "a", "kind": "update", "from": "1.0.0", "to": "1.1.0"})
    write_json(data / "update" / "state.json", {"id": "a", "kind": "update", "done": True, "ok": True, "steps": []})
    ended = _recover_at_boot(data, root)
    assert ended.returncode == 0 and ended.stderr == "", ended.stderr
    # An attempt that did not end (or a state of another attempt, or no readable state) goes to a
    # release's recovery: here none can run it, and the script says so.
    for state in ({"id": "a", "done": False}, {"id": "b", "done": True}, "not json"):
        (data / "update" / "state.json").write_text(state if isinstance(state, str) else json.dumps(state))
        interrupted = _recover_at_boot(data, root)
        assert interrupted.returncode == 1 and "no release under" in interrupted.stderr, (state, interrupted.stderr)
