"""Small rules of attestations held to the code they mirror: the frozen-config reader against the schema's
defaults and the oracle's "file.npz:key" rule, and the no-follow digests against a workspace of links."""
from __future__ import annotations

import os

import pytest

from nightshift.supervisor.attest.config_view import file_of, run_config
from nightshift.supervisor.attest.digests import LinkRefused, sha256_under
from nightshift.supervisor.config.schema import Config, parse_config
from nightshift.supervisor.verify.oracle.readers import split_part


@pytest.mark.parametrize("spec", ["out/a.dat", "out/a.npz:cl", "b.H5:/g/d", "x.json:a.b", "c:/d.dat", "e.hdf5:",
                                  "dir.npz/f.dat", "a.json:b.npz:c"])
def test_file_of_is_the_oracles_rule(spec):
    assert file_of(spec) == split_part(spec)[0]


def test_the_frozen_config_reader_has_the_schemas_defaults_and_values():
    empty, full = run_config(""), Config()
    assert empty.agent.kind == full.agent.kind and empty.agent.claude_bin == full.agent.claude_bin
    assert empty.attest.key == full.attest.key and empty.attest.note == full.attest.note
    text = ('goal = "g"\n[judge]\n[oracle]\ncommand = "c"\n[[oracle.compare]]\nname = "n"\ncandidate = "a"\n'
            'reference = "b"\n[attest]\nkey = "none"\n')
    mine, theirs = run_config(text), parse_config(text)
    assert mine.judge.model == theirs.judge.model and mine.judge.criteria == theirs.judge.criteria
    assert mine.oracle.heldout_budget == theirs.oracle.heldout_budget
    comp, same = mine.oracle.compare[0], theirs.oracle.compare[0]
    assert (comp.name, comp.candidate, comp.reference, comp.heldout, comp.x) == \
        (same.name, same.candidate, same.reference, same.heldout, same.x)
    # the tolerances verify-result holds the attested ones to, when nightshift.toml leaves them at their defaults
    assert (comp.rtol, comp.atol, comp.tolerance, comp.per_column, comp.fields) == \
        (same.rtol, same.atol, same.tolerance, same.per_column, same.fields)
    assert mine.agent.model == theirs.agent.model and mine.attest.host == theirs.attest.host
    assert mine.attest.key == "none"


def test_digests_never_follow_a_link(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "secret"
    (ws / "out").mkdir(parents=True)
    outside.mkdir()
    (outside / "f.dat").write_text("secret")
    (ws / "out" / "real.dat").write_text("ok")
    os.symlink(outside / "f.dat", ws / "out" / "link.dat")
    os.symlink(outside, ws / "linked")
    assert sha256_under(ws, "out/real.dat")[1] == 2
    for rel in ("out/link.dat", "linked/f.dat", "../secret/f.dat", "/etc/passwd"):
        with pytest.raises(LinkRefused):
            sha256_under(ws, rel)


def test_the_readme_publishes_the_schema_nightshift_validates_with():
    import json
    from pathlib import Path

    from nightshift.supervisor.attest.statement import PREDICATE_TYPE, SCHEMA_FILE
    root = Path(__file__).resolve().parent.parent
    readme = (root / "supervisor" / "attest" / "README.md").read_text()
    block = readme.split("<!-- attest-schema: begin")[1].split("<!-- attest-schema: end")[0]
    published = json.loads(block.split("```json", 1)[1].split("```", 1)[0])
    assert published == json.loads(SCHEMA_FILE.read_text())
    assert PREDICATE_TYPE in readme
    assert "supervisor/attest/README.md" in (root / "README.md").read_text()  # linked from the README


def test_the_container_image_is_named_and_digested_from_the_runtimes_variables(tmp_path, monkeypatch):
    import hashlib

    from nightshift.supervisor.attest.environment import environment
    image = tmp_path / "solver.sif"
    image.write_bytes(b"SIF image bytes" * 1000)
    monkeypatch.delenv("SINGULARITY_CONTAINER", raising=False)
    monkeypatch.setenv("APPTAINER_CONTAINER", str(image))
    found = environment("demo", "claude", {}, {})["container"]
    assert found == {"runtime": "apptainer", "image": str(image),
                     "sha256": hashlib.sha256(image.read_bytes()).hexdigest()}
    monkeypatch.setenv("APPTAINER_CONTAINER", str(tmp_path / "a-sandbox-folder"))
    assert "not readable" in environment("demo", "claude", {}, {})["container"]["note"]
    monkeypatch.delenv("APPTAINER_CONTAINER")
    assert environment("demo", "claude", {}, {})["container"] is None


def test_a_commits_tree_is_written_from_the_object_store_without_running_the_repository(tmp_path):
    import subprocess

    from nightshift.supervisor.attest.gitnotes import write_tree
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    (repo / "src" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 5000)
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("src/deep/data.bin")
    (repo / ".gitattributes").write_text("*.bin filter=evil\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    proof = tmp_path / "hook-ran"
    subprocess.run([*git, "config", "filter.evil.smudge", f"touch {proof}; cat"], check=True)
    (repo / ".git" / "hooks" / "post-checkout").write_text(f"#!/bin/sh\ntouch {proof}\n")
    (repo / ".git" / "hooks" / "post-checkout").chmod(0o755)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dest = tmp_path / "fresh"
    dest.mkdir()
    assert write_tree(repo, head, dest) == []
    assert (dest / "src" / "deep" / "data.bin").read_bytes() == bytes(range(256)) * 5000
    assert os.access(dest / "run.sh", os.X_OK) and (dest / "link").is_symlink()
    assert os.readlink(dest / "link") == "src/deep/data.bin" and not proof.exists()


def test_a_fifo_where_a_candidate_was_is_refused_without_blocking(tmp_path):
    """verify-result digests what the agent left: a FIFO there is named, never waited on."""
    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "out" / "result.dat")
    with pytest.raises(LinkRefused, match="not a regular file"):
        sha256_under(tmp_path, "out/result.dat")
