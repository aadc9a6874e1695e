"""After a restore, the plugins the restored table lists are fetched again at start (the plugins
domain fetches a listed plugin whose files are missing; the apply moves plugins/ aside with the
data it replaces, so every listed plugin is fetched and checked against its recorded hash)."""

from __future__ import annotations

from tests.plugins.conftest import host  # noqa: F401 -- the local registry and release host fixture
from tests.plugins.helpers import entry, plugin_archive
from tests.plugins.test_install import call, wait


def test_the_plugins_of_a_restored_backup_are_fetched_again_at_start(make_house, host):  # noqa: F811
    source = make_house()
    source.engine.settings.set_many(host.settings())
    source.start()
    host.registry(entry())
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    assert call(source, "POST", "/plugins/install", {"repo": "hausbox/meteo"})[0] == 200
    backup = source.engine.backups.create_local("9.9.9")

    target = make_house(takeover=True)  # another box, taking the database over: not inert
    target.start()
    summary = target.engine.backups.restore_archive(backup)
    assert summary["tables"]["plugins"] == 1
    target.restart()
    target.start()
    token = source.token()  # the source's admin and signing key came with the backup

    def status() -> str:
        listed = call(target, "GET", "/plugins", token=token)
        assert listed[0] == 200, listed
        return next(p["status"] for p in listed[1] if p["id"] == "meteo")

    assert wait(lambda: status() == "connected", timeout=10), status()
    assert (target.data_dir / "plugins" / "meteo" / "__init__.py").is_file()
