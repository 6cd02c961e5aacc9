"""Issue 38: what the agent leaves is data, wherever nightshift commits it. A scripted command agent (init defaults,
the namespace on) replaces the lab notes by a symlink to a file outside the workspace, leaves a nested repository
whose config sets core.fsmonitor, commits another as a gitlink itself, and leaves a 1 TB sparse file. The run does
not end done; the verdict names each; nightshift commits none of them (the agent's gitlink is taken out of the
index); and the user's own `git status`, `diff`, `log -p` and `submodule status` afterwards run nothing planted
(a marker outside the workspace stays absent).
"""
from __future__ import annotations

import json
import os
import sys
import subprocess

from nightshift.supervisor.commit_refusals import refused_paths
from tests.fixtures_claude import fake_claude  # noqa: F401
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace, run_until_it_rests

PLANT = r"""
set -e
M={marker}
printf '#!/bin/sh\necho "$0 $*" >> %s\nexit 0\n' "$M" > "$PWD/evil.sh"; chmod +x "$PWD/evil.sh"
nested() {{ mkdir -p "$1"; git -C "$1" init -q; git -C "$1" config core.fsmonitor "$PWD/evil.sh"
  echo x > "$1/a"; git -C "$1" add a; git -C "$1" -c user.name=a -c user.email=a@a commit -qm x; }}
nested vendor/blas
nested deps/lib
git add deps/lib 2>/dev/null; git -c user.name=a -c user.email=a@a commit -qm 'vendor a library'
echo '- tried things' >> CHANGELOG.md
rm CHANGELOG.md; ln -s {secret} CHANGELOG.md
truncate -s 1T huge.bin
echo ok > check.txt
"""


def test_links_out_nested_repositories_gitlinks_and_giants_are_named_never_committed_and_never_run(workspace,
                                                                                                    tmp_path):
    need_namespace()
    ws, marker = workspace.path, tmp_path / "outside" / "git-ran"
    secret = tmp_path / "outside" / "id_ed25519"
    marker.parent.mkdir()
    secret.write_text("PRIVATE KEY\n")
    turn = [["shell", PLANT.format(marker=marker, secret=secret)], ["claim", "done", "done"]]
    workspace.configure({"default": turn}, backend="local", pushbacks=1, max_shifts=1, require_changelog=True)
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    events = workspace.events(run)
    assert not any(e["type"] == "run.finished" and e["data"].get("outcome") == "done" for e in events)
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    lines = " | ".join(line for v in verdicts for c in v["checks"] for line in [c["summary"], *c["lines"]])
    assert f"CHANGELOG.md is a symlink (to {secret})" in lines
    assert "vendor/blas is a repository of its own inside the workspace" in lines
    assert "deps/lib is a gitlink (a submodule entry) added during the run" in lines
    tree = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=ws, capture_output=True, text=True).stdout
    index = subprocess.run(["git", "ls-files", "-s"], cwd=ws, capture_output=True, text=True).stdout
    for planted in ("CHANGELOG.md", "huge.bin", "vendor/blas", "deps/lib"):
        assert not any(line.endswith("\t" + planted) and not line.startswith("100644") for line in tree.splitlines())
    assert "160000" not in tree and "160000" not in index and "huge.bin" not in tree
    assert "120000" not in tree, tree  # no symlink (to the key's path) in the user's history
    refused = [e["data"].get("refused") for e in events if e["type"] in ("commit.created", "commit.skipped")]
    assert any(r and "huge.bin" in r.get("too_large", []) and "CHANGELOG.md" in r.get("link_out", []) for r in refused)
    log = nightshift("log", run.run_id, cwd=ws).stdout
    assert "never committed, left for you" in log and "huge.bin: over [verify] max_commit_mb" in log
    for args in (["status"], ["diff", "HEAD~1"], ["log", "-p", "-3"], ["submodule", "status"]):
        subprocess.run(["git", *args], cwd=ws, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert not marker.exists(), marker.read_text()
    assert secret.read_text() == "PRIVATE KEY\n"


def test_a_file_over_the_size_limit_and_links_that_stay_inside_are_told_apart(tmp_path):
    (tmp_path / "big.dat").write_bytes(b"x" * 4096)
    (tmp_path / "small.dat").write_bytes(b"x" * 10)
    (tmp_path / "sub").mkdir()
    os.symlink("../small.dat", tmp_path / "sub" / "inside")
    os.symlink("../../etc/passwd", tmp_path / "sub" / "up")
    os.symlink("/etc/passwd", tmp_path / "abs")
    # 8 MB of which nothing is written: it reports few blocks, as a file on a compressing filesystem (ZFS) does, and
    # under the limit it is committed like any other (its apparent size is what a commit would hash)
    with open(tmp_path / "holes.dat", "wb") as fh:
        fh.truncate(8 << 20)
    found = refused_paths(tmp_path, ["big.dat", "small.dat", "sub/inside", "sub/up", "abs", "gone"], max_bytes=1024)
    assert found == {"too_large": ["big.dat"], "link_out": ["sub/up", "abs"]}
    assert refused_paths(tmp_path, ["holes.dat", "big.dat"]) == {}


POINTERS = r"""
set +e
M={marker}
printf '#!/bin/sh\necho "$0 $*" >> %s\nexit 0\n' "$M" > "$PWD/evil.sh"; chmod +x "$PWD/evil.sh"
mkdir -p stash; cp -r .git stash/gitcopy
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = %s\n' "$PWD/evil.sh" > stash/gitcopy/config
echo "$PWD/stash/gitcopy" > .git/commondir
mkdir -p .git/objects/info; echo "$PWD/stash/gitcopy/objects" > .git/objects/info/alternates
echo 0000000000000000000000000000000000000000 > .git/shallow
echo ok > check.txt
echo '- tried' >> CHANGELOG.md
"""


def test_git_pointer_files_planted_by_the_agent_are_put_back_named_and_never_run(workspace, tmp_path):
    need_namespace()
    ws, marker = workspace.path, tmp_path / "outside" / "git-ran"
    marker.parent.mkdir()
    turn = [["shell", POINTERS.format(marker=marker)], ["claim", "done", "done"]]
    workspace.configure({"default": turn}, backend="local", pushbacks=1, max_shifts=1)
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    events = workspace.events(run)
    assert not any(e["type"] == "run.finished" and e["data"].get("outcome") == "done" for e in events)
    lines = " | ".join(line for e in events if e["type"] == "verify.finished" for c in e["data"]["checks"]
                       for line in c["lines"])
    for planted in (".git/commondir", ".git/objects/info/alternates", ".git/shallow"):
        assert planted in lines, (planted, lines)
        assert not (ws / planted).exists()
    for args in (["status"], ["diff"], ["log", "-p", "-2"], ["submodule", "status"]):
        subprocess.run(["git", *args], cwd=ws, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert not marker.exists(), marker.read_text()


def test_every_write_the_namespace_refused_is_a_refusal_in_log_report_and_pushback(workspace):
    """Issue 38: `rm` and `sed -i` on a protected test fail with "Device or resource busy" (a read-only bind);
    they were recorded nowhere and the verdict said "protected files unchanged". Each is now a refusal event, a line
    of `nightshift log`, a row of the report's "needed a person" and a line of the push-back."""
    need_namespace()
    ws = workspace.path
    (ws / "tests").mkdir()
    (ws / "tests" / "test_kept.py").write_text("def test_kept():\n    assert True\n")
    vandal = "rm -f tests/test_kept.py; sed -i 's/True/False/' tests/test_kept.py; echo '- x' >> CHANGELOG.md"
    workspace.configure({"s1t1": [["shell", vandal]], "default": [["claim", "done", "done"]]},
                        backend="local", pushbacks=1, max_shifts=1,
                        test_command=f"{sys.executable} -m pytest -q -p no:cacheprovider tests")
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    denied = [e["data"] for e in workspace.events(run) if e["type"] == "policy.denied"]
    lines = [d["input"] for d in denied if d.get("rule") == "read_only"]
    assert any("rm" in line and "tests/test_kept.py" in line and "busy" in line.lower() for line in lines), denied
    assert any("sed" in line for line in lines), denied
    assert (ws / "tests" / "test_kept.py").read_text() == "def test_kept():\n    assert True\n"
    assert "tests/test_kept.py" in run.turn_file(1, 2, "prompt.md").read_text()
    log = nightshift("log", run.run_id, cwd=ws).stdout
    assert "Device or resource busy" in log
    report = nightshift("report", run.run_id, cwd=ws)
    html = (run.root / "report.html").read_text()
    assert report.returncode == 0 and "Device or resource busy" in html


def test_a_git_of_ours_dies_with_the_process_that_started_it(tmp_path):
    """Issue 38: a `git add` hashing a giant outlived its killed supervisor for 50 minutes. A git started through
    GitPython's guarded runner, blocked on its input, is gone once its parent is killed with SIGKILL."""
    import signal
    import time
    import psutil
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code = ("import os, sys; from pathlib import Path; from nightshift.supervisor.gitops import open_repo\n"
            "r, w = os.pipe(); repo = open_repo(Path(sys.argv[1]))\n"
            "repo.git.execute(['git', 'hash-object', '--stdin'], istream=os.fdopen(r, 'rb'))\n")
    parent = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)])
    deadline = time.monotonic() + 30
    while not (kids := psutil.Process(parent.pid).children()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kids and "git" in kids[0].name(), kids
    git = kids[0]
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=30)
    gone, alive = psutil.wait_procs([git], timeout=30)
    assert not alive, f"git {git.pid} outlived its parent"


def test_the_users_own_submodule_is_never_taken_for_the_agents(tmp_path):
    from nightshift.supervisor.commit_refusals import gitlinks_added
    ws, lib = tmp_path / "ws", tmp_path / "lib"
    for repo in (ws, lib):
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / "a").write_text("a\n")
        subprocess.run(["git", "-C", str(repo), "add", "a"], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "a"],
                       check=True)
    subprocess.run(["git", "-C", str(ws), "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib),
                    "vendor/lib"], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(ws), "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "sub"],
                   check=True)
    base = subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert gitlinks_added(ws, base) == [] and gitlinks_added(ws, None) == []
    first = subprocess.run(["git", "-C", str(ws), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                           text=True).stdout.strip()
    assert gitlinks_added(ws, first) == ["vendor/lib"]  # measured from before it was added, it is one


def test_claude_codes_refused_writes_to_a_kept_test_are_named(workspace, fake_claude):
    """The same with the real Claude Code CLI (headless; only the model is faked): its Bash `rm` and `sed -i` of a
    test kept since the start are refused, and named as refusals, whichever layer refused them."""
    from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
    from tests.fake_anthropic import bash, text, tools
    from tests.fixtures_claude import claim
    need_namespace()
    fake, seed = fake_claude
    ws = workspace.path
    (ws / "tests").mkdir()
    (ws / "tests" / "test_kept.py").write_text("def test_kept():\n    assert True\n")
    seed(ws, mode="headless", backend="local")
    toml = ws / "nightshift.toml"
    toml.write_text(toml.read_text().replace('test_command = "test \\"$(cat check.txt)\\" = ok"',
                                             f'test_command = "{sys.executable} -m pytest -q -p no:cacheprovider tests"'))
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "pytest"], cwd=ws, check=True)
    hidden = "python3 -c \"import os; os.remove('tests/' + 'test_' + 'kept.py')\""  # no path for the hook to see
    fake.push(tools(bash("rm -f tests/test_kept.py; sed -i 's/True/False/' tests/test_kept.py; echo ok > check.txt")),
              tools(bash(hidden)), tools(bash(claim("done"))), text("done"))
    run = create_run(ws, resolve_config(ws))
    run_foreground(run, say=lambda _: None)
    denied = [json.loads(line)["data"] for line in run.events.read_text().splitlines() if '"policy.denied"' in line]
    assert any("test_kept.py" in str(d.get("input")) and d["rule"] == "tests" for d in denied), denied  # the hook
    assert any("test_kept.py" in str(d.get("input")) and "busy" in str(d.get("input")).lower() and
               d["rule"] == "read_only" for d in denied), denied  # the mount, seen in Claude's own tool result
    assert (ws / "tests" / "test_kept.py").read_text() == "def test_kept():\n    assert True\n"


def test_only_writes_refused_on_a_kept_path_are_refusals(tmp_path):
    """NFS's busy `.nfs000...` files on a cluster home and the erofs filesystem's name are no refusal of the
    namespace's; a write refused on a kept test (or a rename beside it, as sed -i does) is, in C's words and Node's."""
    from nightshift.supervisor.sandbox.boundary import Boundary
    from nightshift.supervisor.shift.turn_boundary import kept_places, refused_write
    ws = tmp_path / "ws"
    boundary = Boundary(ws, "auto", (), (ws / "reference" / "r.dat",), (), (ws / "tests" / "test_kept.py",
                        ws / "nightshift.toml"), (), True, False, False)
    kept = kept_places(boundary)
    counted = lambda line: refused_write(line, kept)  # noqa: E731
    assert counted("rm: cannot remove 'tests/test_kept.py': Device or resource busy")
    assert counted("sed: cannot rename tests/sedX1a2b3: Device or resource busy")
    assert counted(f"EROFS: read-only file system, open '{ws}/reference/r.dat'")
    assert counted("bash: nightshift.toml: Read-only file system")
    assert not counted("rm: cannot remove 'build/.nfs000000000123': Device or resource busy")
    assert not counted("modprobe: FATAL: Module erofs not found in directory /lib/modules")
    assert counted("cp: cannot create regular file '/usr/lib/x.so': Read-only file system")  # outside: refused too


def test_the_users_own_nested_repository_from_before_the_run_is_theirs(workspace):
    """An untracked clone of a dependency the user kept in the workspace before the run is not the agent's: the
    honest run ends done, and nightshift commits nothing of it."""
    need_namespace()
    ws = workspace.path
    workspace.configure({"default": [["write", "check.txt", "ok"], ["append", "CHANGELOG.md", "\n- done\n"],
                                     ["claim", "done", "done"]]}, backend="local", pushbacks=1, max_shifts=1)
    subprocess.run(["git", "init", "-q", str(ws / "dep")], check=True)
    (ws / "dep" / "lib.c").write_text("int f(void) { return 1; }\n")
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    events = workspace.events(run)
    assert [e["data"]["outcome"] for e in events if e["type"] == "run.finished"] == ["done"], \
        [e["data"]["summary"] for e in events if e["type"] == "verify.finished"]
    tree = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=ws, capture_output=True, text=True)
    assert "dep" not in tree.stdout
