"""`nightshift attest [RUN] [--verdict N] [--new-key]` and `nightshift verify-result FILE|COMMIT ...`: the face of
supervisor/attest (parse, compose, print). Errors are one line (UserError); a check prints a line per thing named.
"""
from __future__ import annotations

import sys
from pathlib import Path


def attest_main(run: str | None, verdict: int | None, make_key: bool, key: str | None = None) -> int:
    from nightshift.supervisor.attest.keys import new_key
    if make_key:
        path, printed = new_key()
        print(f"made an ed25519 key: {path} (public: {path}.pub, {printed}); nightshift signs with it unless "
              "[attest] key names another; give the .pub file to whoever checks your results")
        if run is None:
            return 0
    from nightshift.supervisor.attest.write import attest_verdict
    from nightshift.supervisor.cli.report.verb import resolve_run_dir
    done = attest_verdict(resolve_run_dir(run), verdict, key=key)
    print("\n".join(done.lines()))
    return 0


UNSIGNED = 3  # verify-result's exit code for an unsigned attestation whose every checked claim holds (README)


def unsigned_answer(rerun: bool) -> str:
    """What an unsigned attestation whose every checked claim holds still proves, and what it does not."""
    proves = ("the commit, its nightshift.toml, its Definition of done and every file named above are the ones the "
              "statement describes (by digest)" + (", and its figures were measured again here, each within its "
              "tolerance" if rerun else ""))
    lacks = ("who wrote it, or that nightshift's check passed: anyone who could write the file (the agent too) could "
             "have written the same statement" + ("" if rerun else "; its figures are its writer's word (--rerun "
                                                                     "measures them again)"))
    return "\n".join([
        "UNSIGNED: every claim checked above holds, but no key signed this attestation (exit 3)",
        f"  it proves: {proves}",
        f"  it does not prove: {lacks}",
        "  to sign: make a key once (`nightshift attest --new-key`), then `nightshift attest RUN` signs the run's "
        "verdict again; give the .pub file to whoever checks. `--allow-missing signature` accepts an unsigned one"])


def verify_result_main(target: str, key: str | None, rerun: bool, allow: list[str], references: list[str],
                       folder: str | None, accept_open: list[str] = ()) -> int:
    from nightshift.supervisor.attest.check import check_result, workspace_of
    if rerun:  # the commit is a stranger's code: it runs only inside the whole sandbox, or with its doors accepted
        from nightshift.supervisor.sandbox.probe import open_parts
        # the oracle command runs without network there: the Landlock scope is no part of its sandbox
        refused = [(door, why) for door, why in open_parts("auto", shared_network=False) if door not in accept_open]
        if refused:  # one line naming every door, so one fix or one command line accepts them all
            doors = " and ".join(f"{door} ({why})" for door, why in refused)
            flags = " ".join(f"--accept-open {door}" for door, _why in refused)
            print(f"nightshift: verify-result --rerun would run the commit's oracle command with the sandbox's "
                  f"door(s) open: {doors}; fix that, or accept it with {flags}", file=sys.stderr)
            return 2
    workspace = workspace_of(target, folder)
    allowed = [name.strip() for item in allow for name in item.split(",") if name.strip()]
    from nightshift.supervisor.cli.progress import step
    doing = ("writing the commit's tree, running its oracle command and measuring each comparison again" if rerun
             else "checking the signature and the digests")
    with step(f"verify-result: {doing}"):  # --rerun runs the stranger's oracle: minutes, said on a terminal
        found = check_result(target, workspace, Path(key).expanduser() if key else None, allowed,
                             [Path(r).expanduser() for r in references], rerun)
    for line in found.render():
        print(line)
    if found.failed:
        print(f"NOT VERIFIED: {found.failed} thing(s) named above do not hold or could not be checked")
        return 1
    if found.is_unsigned:
        print(unsigned_answer(rerun))
        return UNSIGNED
    stated = sum(kind.startswith("stated") for kind, _text in found.lines)
    weaker = found.sandbox not in (None, "full")  # said in the verdict's own line: never read as a full one
    print(("VERIFIED" + (f", sandbox: {found.sandbox} (weaker than full, accepted)" if weaker else "")) +
          ": the signature and every claim checked above hold" +
          (", every figure within its tolerance again" if rerun else "") +
          (f"; {stated} claim(s) rest on the signer's word (listed)" if stated else ""))
    return 0
