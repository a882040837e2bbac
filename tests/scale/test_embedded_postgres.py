"""`make demo-cluster`'s embedded PostgreSQL changes no permission outside its own folder."""

from __future__ import annotations

import os

import pytest

psycopg = pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")
pytest.importorskip("pgserver", reason="needs the scale-test extra (pgserver)")

from harness.scale.demo import embedded_postgres  # noqa: E402


@pytest.mark.skipif(os.geteuid() != 0, reason="pgserver changes permissions only as root")
def test_a_private_folder_above_the_data_stays_private(tmp_path) -> None:
    """Run as root with the data under a 0700 folder: the server answers, and that folder
    and every one above it keep their permissions."""
    private = tmp_path / "private"
    (private / "runs").mkdir(parents=True)
    private.chmod(0o700)
    above = [private / "runs", private, *private.parents]
    before = {str(p): oct(p.stat().st_mode) for p in above}

    with embedded_postgres(private / "runs" / ".postgres") as url, psycopg.connect(url) as db:
        answer = db.execute("SELECT 1").fetchone()

    assert answer == (1,)
    assert {str(p): oct(p.stat().st_mode) for p in above} == before
