"""The update helper: ``python -m hausbox.updater``, a program apart from the service.

It installs a new release beside the running one, switches, restarts the service, waits until the
new version serves, and switches back when it does not. It outlives the service it restarts (on the
appliance it runs in its own systemd unit) and imports nothing of the engine: the standard library
and requests only, so a broken release can never break the helper that rolls it back. It always
runs from the release that is serving when it starts (``releases/<old>/bin/python``), never through
the ``current`` link it switches.

Install layout under the install root (``HAUSBOX_INSTALL_ROOT``; the appliance image uses it)::

    <root>/releases/<version>/     a self-contained venv with hausbox==<version> installed;
                                   complete once it holds ``.complete`` (written last)
    <root>/current  -> releases/<version>   the active release; the service unit runs
                                   ``<root>/current/bin/python -m hausbox serve``
    <root>/previous -> releases/<version>   the release before it (the rollback target)
    <root>/downloads/              artifacts being fetched and wheelhouses being installed

Both links are switched atomically (a new link beside the old one, renamed over it, the folder
synced), so a power cut leaves one release or the other active, never none. Only ``current`` and
``previous`` are kept once an update succeeded. An incomplete release folder (a cut in the middle of
an install) is removed and rebuilt by the next attempt.

The artifact is a wheelhouse: a zip of ``.whl`` files at its top level (the hausbox wheel and every
dependency), so the box needs nothing from the network beyond the release host. Its size and sha256
are checked before anything is unpacked; an entry that is not a plain ``*.whl`` name is refused.

Files in the data directory's ``update/`` folder (see ``state.py``): ``job.json`` (what to do, written
by the service), ``state.json`` (the helper's progress, written atomically at each step, read by the
service, which turns each new step into a ``system.update.progress`` event), ``running-version.json``
(written by each service at start: the helper confirms health by it plus ``GET /api/v1/health``
answering 200), ``helper.log`` (the helper's output).

Commands::

    python -m hausbox.updater run <data-dir>/update/job.json     # an update or a restart
    python -m hausbox.updater recover <data-dir> <install-root>  # at boot, before the service
"""
