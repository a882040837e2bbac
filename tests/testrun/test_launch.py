"""Tests of the sandbox launch: scrubbed environment, isolation flags, what the tests can see."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from harness.tasks.spec import TaskSpec
from harness.testrun import launch, privilege
from harness.testrun.run import SandboxError, TestLimits, _execute, sandbox_kind

TASK_DIR = Path(__file__).parents[1] / "hostile" / "task"
TASK = TaskSpec(
    id="launch-calc",
    base_dir=TASK_DIR,
    reference=(),
    tests=(TASK_DIR / "acceptance" / "test_calc.py",),
    output=TASK_DIR / "out/calc.py",
)
needs_bwrap = pytest.mark.skipif(not launch.bwrap_works(), reason="bubblewrap not usable here")


KINDS = [*(["bwrap"] if launch.bwrap_works() else []), "none"]
ALLOWED = {
    "PATH",
    "HOME",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "NO_COLOR",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    launch.MARKER_VAR,
}
needs_drop = pytest.mark.skipif(not privilege.can_drop(), reason="needs root and /proc")


def probe(code: str, sandbox: str = "auto") -> str:
    """Run `code` as the body of calc.add inside the sandbox; return what it raised."""
    body = "".join(f"    {line}\n" for line in code.splitlines())
    source = f"import os\n\n\ndef add(a, b):\n{body}\n\ndef mul(a, b):\n    return 0\n"
    limits = TestLimits(per_test_timeout_s=5, collect_timeout_s=15, sandbox=sandbox)  # type: ignore[arg-type]
    result = _execute(TASK, source, limits)
    return result.cases[0].message


@needs_drop
def test_environment_is_an_allowlist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's environment holds only the allowlisted names, whatever the parent has."""
    monkeypatch.setenv("GEMINI_API_KEY", "g-secret-0123456789")
    monkeypatch.setenv("PYTHONPATH", "/evil")
    plan = launch.make_plan("rlimits", tmp_path, tmp_path / "root", 16, 8, privilege.sandbox_uid())
    if plan.interpreter:
        plan.interpreter.close()
    if plan.cgroup:
        launch.cgroup.destroy(plan.cgroup)

    assert {k for k, _ in plan.env} == ALLOWED | {"PYTHONHOME", "LD_LIBRARY_PATH"}
    assert "g-secret-0123456789" not in repr(plan)


@needs_drop
@pytest.mark.parametrize("kind", KINDS)
def test_candidate_runs_as_a_throwaway_uid(kind: str) -> None:
    """As root, candidate code runs as a uid of its own: never root, never the harness's,
    never another run's, and the harness's environment (its keys) is closed to it."""
    message = probe(
        "try:\n"
        "    leaked = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
        "except OSError as exc:\n"
        "    leaked = type(exc).__name__\n"
        "raise ValueError(f'uid={os.getuid()} gid={os.getgid()} ppid_env={leaked!r}')",
        kind,
    )
    uid = int(message.split("uid=")[1].split()[0])

    assert uid >= 0x7E000000 and f"gid={uid} " in message
    assert "ppid_env='PermissionError'" in message or kind == "bwrap"


def test_fallback_refuses_when_it_cannot_drop(monkeypatch: pytest.MonkeyPatch) -> None:
    """No other uid to run candidate code as: the fallback refuses, naming the unsafe setting."""
    monkeypatch.setattr(privilege, "can_drop", lambda: False)
    monkeypatch.delenv(privilege.UNSAFE_VAR, raising=False)

    with pytest.raises(SandboxError, match=privilege.UNSAFE_VAR):
        sandbox_kind(TestLimits(sandbox="none"))


def test_unsafe_setting_runs_the_fallback_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's explicit unsafe setting lets the fallback run, with a warning each run."""
    monkeypatch.setattr(privilege, "can_drop", lambda: False)
    monkeypatch.setenv(privilege.UNSAFE_VAR, "1")
    with capture_logs() as logs:
        kind = sandbox_kind(TestLimits(sandbox="none"))

    assert (kind, [e["event"] for e in logs]) == ("rlimits", ["sandbox_unsafe_same_user"])


@needs_bwrap
def test_bwrap_plan_isolates(tmp_path: Path) -> None:
    """The bubblewrap command cuts network, pids, and dies with its parent."""
    plan = launch.make_plan("bwrap", tmp_path, tmp_path / "root", 16, 8, privilege.sandbox_uid())
    if plan.cgroup:
        launch.cgroup.destroy(plan.cgroup)

    assert {"--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"} <= set(
        plan.argv
    )
    assert "/work" not in plan.argv[plan.argv.index("--ro-bind") + 1]


@needs_bwrap
def test_bwrap_sandbox_sees_only_itself() -> None:
    """Inside bubblewrap: unprivileged uid, a handful of pids, read-only system, private /tmp."""
    message = probe(
        "pids = [p for p in os.listdir('/' + 'proc') if p.isdigit()]\n"
        "ro = os.access('/usr', os.W_OK)\n"
        "open('/tmp/x', 'w').write('ok')\n"
        "raise ValueError(f'uid={os.getuid()} pids={len(pids)} usr_writable={ro}')"
    )
    uid = int(message.split("uid=")[1].split()[0])

    assert uid != 0 if os.geteuid() == 0 else uid == os.getuid()
    assert int(message.split("pids=")[1].split()[0]) <= 4 and "usr_writable=False" in message


@needs_bwrap
def test_bwrap_scratch_is_read_only() -> None:
    """The tests and the candidate cannot be changed, nor files added next to them."""
    message = probe("open('conftest.py', 'w')")

    assert "Read-only file system" in message or "Permission denied" in message


def test_a_night_that_cannot_drop_exits_2_before_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At start-up, not mid-night: the refusal is bad input (exit 2), nothing ran or spent."""
    from harness.cli import main

    example = Path(__file__).resolve().parents[2] / "tasks" / "example" / "tasks.yaml"
    config = tmp_path / "harness.yaml"
    config.write_text("tests:\n  sandbox: none\n")
    monkeypatch.setattr(privilege, "can_drop", lambda: False)
    monkeypatch.delenv(privilege.UNSAFE_VAR, raising=False)
    runs = tmp_path / "runs"
    argv = ["run", str(example), "--provider", "sim", "--run-dir", str(runs)]

    assert main([*argv, "--config", str(config)]) == 2
    assert not (runs / "latest").exists()


SEED_TESTS = """
import mod

WORDS = [f"word{i}" for i in range(40)]


def test_candidate_side_set():
    assert mod.order(WORDS) == ""


def test_test_side_set():
    assert repr(set(WORDS)) == ""
"""


def _one_file_task(tmp_path: Path, task_id: str, tests: str, output: str, isolation: str):
    """A task of one test file (`acceptance/test_<id>.py`) and its output `out/<output>`."""
    (tmp_path / "acceptance").mkdir()
    test_file = tmp_path / "acceptance" / f"test_{task_id.replace('-', '_')}.py"
    test_file.write_text(tests)
    return TaskSpec(
        id=task_id,
        base_dir=tmp_path,
        reference=(),
        tests=(test_file,),
        output=tmp_path / "out" / output,
        isolation=isolation,  # type: ignore[arg-type]
    )


@pytest.mark.skipif(
    not launch.bwrap_works() and not privilege.can_drop(), reason="no sandbox to run in here"
)
@pytest.mark.parametrize("isolation", ["in_process", "boundary"])
def test_two_runs_print_the_same_set_order(tmp_path: Path, isolation: str) -> None:
    """The sandbox pins the hash seed: a set printed by the candidate and one printed by the
    tests come out in the same order in two runs (so a strict replay sees the same output),
    and the result says whether the candidate ran in the test process."""
    if isolation == "boundary" and not launch.bwrap_works():
        pytest.skip("the boundary needs bubblewrap")
    task = _one_file_task(tmp_path, "seed", SEED_TESTS, "mod.py", isolation)
    code = "def order(words):\n    return repr(set(words))\n"
    limits = TestLimits(per_test_timeout_s=10, collect_timeout_s=20)

    first, second = (_execute(task, code, limits) for _ in range(2))

    texts = [[(c.outcome.value, c.message, c.details) for c in r.cases] for r in (first, second)]
    assert texts[0] == texts[1] and len(texts[0]) == 2
    assert all(o == "failed" and "word39" in d for o, _, d in texts[0])
    assert (first.in_process, second.in_process) == (isolation == "in_process",) * 2


LIMITS = TestLimits(max_procs=16, timeout_s=60, cpu_s=50, file_size_mb=8, memory_mb=1536)


def _command_launch(script: str, report: bool) -> str:
    """What `sh -c script` printed, run as a foreign test command under bubblewrap."""
    return _launched(("sh", "-c", script), report)


def _launched(
    argv: tuple[str, ...],
    report: bool = False,
    exit_code: int = 0,
    files: tuple = (),
    limits: TestLimits = LIMITS,
) -> str:
    """What `argv` printed, run as a foreign test command under bubblewrap over a tree of
    `files` (path, bytes) and t.txt; it must end with `exit_code`."""
    from harness.testrun.fspawn import ForeignRun, launch_foreign
    from harness.testrun.scratch import Pristine

    pristine = Pristine((("t.txt", b"x"), *files), ("t.txt",))
    run = ForeignRun(pristine, "c.txt", "", argv, report, limits, "bwrap")
    got = launch_foreign(run)
    assert got.exit_code == exit_code, got.text(got.output)
    return got.text(got.output)


def _status(text: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


# The same listing from a shell and from node (whose cgroups are joined beside its start,
# launch._JOIN_BESIDE): status, cgroups, limits, each open fd and what it is, the env's names.
_LOCKDOWN_PROBES = {
    "sh": (
        "sh",
        "-c",
        "cat /proc/self/status; cat /proc/self/cgroup; cat /proc/self/limits; "
        "for fd in /proc/self/fd/*; do echo fd=${fd##*/} $(readlink $fd); done; "
        "env | sed 's/=.*//; s/^/env=/'",
    ),
    "node": (
        "node",
        "-e",
        "const fs = require('node:fs');"
        "for (const f of ['status', 'cgroup', 'limits'])"
        "  process.stdout.write(fs.readFileSync(`/proc/self/${f}`, 'latin1'));"
        "for (const fd of fs.readdirSync('/proc/self/fd')) {"
        "  let to = ''; try { to = fs.readlinkSync(`/proc/self/fd/${fd}`); } catch {}"
        "  console.log(`fd=${fd} ${to}`); }"
        "for (const name of Object.keys(process.env)) console.log(`env=${name}`);"
        "console.log(`execArgv=${process.execArgv.join(' ')}`);",
    ),
}


def _launch_groups(text: str) -> set[str]:
    """The controllers whose group, in a /proc/self/cgroup listing, is a launch's."""
    return {
        line.split(":")[1]
        for line in text.splitlines()
        if line[:1].isdigit() and line.rsplit("/", 1)[-1].startswith("harness-")
    }


@needs_bwrap
@pytest.mark.parametrize("command", sorted(_LOCKDOWN_PROBES))
@pytest.mark.parametrize("report", [False, True])
def test_a_command_launch_is_locked_down_like_the_bootstrap(report: bool, command: str) -> None:
    """A foreign command under bubblewrap (a shell, or node, which joins its cgroups beside
    its start) runs with no capability and no new privileges, its limits set (hard = soft),
    as root as a throwaway uid with no other group inside the launch's pids and memory
    cgroups, holds the record pipe only when it writes a report, and holds no cgroup file
    and no word of the join in its environment."""
    text = _launched(_LOCKDOWN_PROBES[command], report)
    status = _status(text)
    assert status["NoNewPrivs"].strip() == "1"
    assert int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0
    limits = {line[:26].strip(): line[26:].split()[:2] for line in text.splitlines()}
    assert limits["Max core file size"] == ["0", "0"]
    assert limits["Max cpu time"] == [str(int(LIMITS.cpu_s))] * 2
    assert limits["Max file size"] == [str(LIMITS.file_size_mb << 20)] * 2
    assert limits["Max address space"] == [str(max(LIMITS.memory_mb, 1024) << 20)] * 2
    if os.geteuid() == 0:  # a fresh uid: no process of its own before the launch's
        assert limits["Max processes"] == [str(LIMITS.max_procs)] * 2
    fds = {int(line[3:].split()[0]): line[3:] for line in text.splitlines() if line[:3] == "fd="}
    if command == "sh":  # 3: the shell's listing of its own folder
        assert bool(set(fds) - {0, 1, 2, 3}) == report
    else:  # node's own (its event loop's) are low; the record pipe's is 200 or more
        assert bool({fd for fd in fds if fd >= 100}) == report
    assert [line for line in fds.values() if "cgroup" in line] == []
    assert "env=HARNESS_CGROUP_JOIN" not in text.splitlines()
    assert not [line for line in text.splitlines() if "join.cjs" in line]  # nor to hand on
    if os.geteuid() == 0:
        uids, groups = status["Uid"].split(), status["Groups"].split()
        assert len(set(uids)) == 1 and int(uids[0]) >= 0x7E000000 and groups == []
        assert {"pids", "memory"} <= _launch_groups(text), text


def _late_join(monkeypatch: pytest.MonkeyPatch, fail: str = "") -> None:
    """Make the join beside node's start late (its writer waits until node runs, then half a
    second more) or, with `fail`, fail ("first": no group joined; "second": the pids group
    joined, not the memory group)."""
    late = '(while read c < /proc/$$/comm && [ "$c" != node ]; do sleep 0.01; done; sleep 0.5; '
    script = launch._JOIN_BESIDE.replace("(", late, 1)
    write = 'echo $$ > "$1/cgroup.procs"'
    if fail == "first":
        script = script.replace(write, 'echo $$ > "$1/no-such-file"')
    elif fail == "second":
        script = script.replace(write, f"case $1 in */memory/*) false;; *) {write};; esac")
    assert script.count("sleep 0.5") == 1 and (not fail or "esac" in script or write not in script)
    monkeypatch.setattr(launch, "_JOIN_BESIDE", script)


needs_root_bwrap = pytest.mark.skipif(
    os.geteuid() != 0 or not launch.bootstrapless("bwrap"),
    reason="launch cgroups are made as root only, and joined by the lock-down programs",
)
# Prints "<who>: <the controllers whose group is a launch's>" (a line of node, in any module).
_GROUPS_JS = (
    "require('node:fs').writeSync(1, `${WHO}: ` + require('node:fs')"
    ".readFileSync('/proc/self/cgroup', 'latin1').split('\\n')"
    ".filter((l) => /\\/harness-[0-9a-f]+$/.test(l)).map((l) => l.split(':')[1]).sort()"
    ".join(',') + '\\n');\n"
)
_TREE = (
    ("first.cjs", ("const WHO = 'require';\n" + _GROUPS_JS).encode()),
    (
        "first.mjs",
        (
            "import { createRequire } from 'node:module';\n"
            "const require = createRequire(import.meta.url);\n"
            "const WHO = 'import';\n" + _GROUPS_JS
        ).encode(),
    ),
    ("child.cjs", ("const WHO = 'child';\n" + _GROUPS_JS).encode()),
    (
        "main.cjs",
        (
            "const WHO = 'main';\n"
            + _GROUPS_JS
            + "require('node:child_process').execFileSync(process.execPath, "
            "[__dirname + '/child.cjs'], { stdio: 'inherit' });\n"
        ).encode(),
    ),
)


@needs_bwrap
@needs_root_bwrap
def test_no_line_of_a_node_launch_runs_before_its_join_however_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """node's cgroups are joined beside its start, by a writer made here to come half a
    second after node runs: still, a `--require` and an `--import` of the tree (a TypeScript
    loader's ways in), the main module and a process it starts all run their first line
    inside the launch's pids and memory groups."""
    _late_join(monkeypatch)

    two_nodes = TestLimits(max_procs=64, timeout_s=60)  # each node has a dozen threads
    argv = ("node", "--require", "./first.cjs", "--import", "./first.mjs", "main.cjs")

    text = _launched(argv, files=_TREE, limits=two_nodes)

    shown = dict(line.split(": ") for line in text.splitlines() if ": " in line)
    assert shown == dict.fromkeys(("require", "import", "main", "child"), "memory,pids"), text


@needs_bwrap
@needs_root_bwrap
@pytest.mark.parametrize("fail", ["first", "second"])
def test_a_failed_join_ends_a_node_launch_before_its_first_line(
    monkeypatch: pytest.MonkeyPatch, fail: str
) -> None:
    """A join beside node's start that fails (no group joined, or the pids group and not the
    memory group) ends the launch with 126, as a failed join before the command does, and no
    line of the command's code runs."""
    _late_join(monkeypatch, fail)

    text = _launched(("node", "--require", "./first.cjs", "main.cjs"), exit_code=126, files=_TREE)

    assert "could not join the launch's cgroup" in text
    assert not [line for line in text.splitlines() if line.startswith(("require:", "main:"))]


@needs_bwrap
@needs_root_bwrap
def test_a_command_that_is_not_node_joins_its_cgroups_before_it_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only node waits for a join beside its start (its first preload); any other command
    (a shell here, `go test`, a test binary, a runner started through a script) has its
    cgroups joined before it starts, so even a late writer could not let it run first."""
    _late_join(monkeypatch)

    text = _launched(
        ("sh", "-c", "cat /proc/self/cgroup; echo HARNESS_CGROUP_JOIN=$HARNESS_CGROUP_JOIN")
    )

    assert {"pids", "memory"} <= _launch_groups(text), text
    assert "HARNESS_CGROUP_JOIN=\n" in text


def test_only_node_is_given_the_join_beside_its_start() -> None:
    """`command_argv` joins beside the start only for node itself, with the preload first of
    its options; for any other command, or with no preload in the launch, the join comes
    before the command as it always did."""
    plan = launch.Plan(
        "bwrap", ("bwrap", "--"), (), 1, None, "m", Path("/x/harness-1"), direct=True
    )
    if launch._lockdown_tools() is None:
        pytest.skip("lock-down programs not here")
    argv = {
        name: launch.command_argv(plan, plan.argv, command, {"core": 0}, preload)
        for name, command, preload in (
            ("node", ("node", "--test", "-r", "x"), "/b/join.cjs"),
            ("path", ("/usr/bin/node", "--test"), "/b/join.cjs"),
            ("no preload", ("node", "--test"), None),
            ("go", ("go", "test"), "/b/join.cjs"),
            ("env", ("env", "node", "--test"), "/b/join.cjs"),
        )
    }
    assert argv["node"][1] == ("node", "--require=/b/join.cjs", "--test", "-r", "x")
    assert argv["path"][1][:2] == ("/usr/bin/node", "--require=/b/join.cjs")
    for name, (head, command) in argv.items():
        beside = name in ("node", "path")
        assert (launch._JOIN_BESIDE in head, launch._JOIN in head) == (beside, not beside)
        assert beside or not any("--require" in part for part in command)


@needs_bwrap
@pytest.mark.skipif(not launch.bootstrapless("bwrap"), reason="lock-down programs not usable")
def test_a_command_launch_sees_no_interpreter() -> None:
    """A launch that starts no Python binds none: the harness's interpreter and its packages
    are out of the command's sight."""
    import sys

    text = _command_launch(f"ls -d {sys.prefix} {sys.base_prefix} 2>&1; true", False)
    assert "No such file or directory" in text
    assert text.count("No such file") == len({sys.prefix, sys.base_prefix})


# What a module's first lines see: its descriptors' targets.
_FDS = (
    "def _fds():\n"
    "    found = []\n"
    "    for n in os.listdir('/proc/self/fd'):\n"
    "        try:\n"
    "            found.append(os.readlink(f'/proc/self/fd/{n}'))\n"
    "        except OSError:  # the listing's own descriptor, closed by now\n"
    "            pass\n"
    "    return found\n\n\n"
)
_CGROUP_PROBE = (
    "import os\n\n\n" + _FDS + "GROUPS = open('/proc/self/cgroup').read()\n"
    "THREADS = len(os.listdir('/proc/self/task'))\n"
    "FDS = _fds()\n\n\n"
    "def add(a, b):\n    return [GROUPS, THREADS, FDS]\n\n\n"
    "def mul(a, b):\n    return 0\n"
)
_CGROUP_TESTS = (
    "import os\n\nimport calc\n\n\n" + _FDS + "MINE = open('/proc/self/cgroup').read()\n"
    "MY_FDS = _fds()\n\n\n"
    "def _launch_groups(text):\n"
    "    return {line.split(':')[1] for line in text.splitlines()\n"
    "            if line.rsplit('/', 1)[-1].startswith('harness-')}\n\n\n"
    "def test_the_tests_are_in_the_launch_groups():\n"
    "    assert {'pids', 'memory'} <= _launch_groups(MINE), MINE\n"
    "    assert not [f for f in MY_FDS if f.endswith('cgroup.procs')], MY_FDS\n\n\n"
    "def test_the_candidate_is_in_its_launch_groups():\n"
    "    groups, threads, fds = calc.add(1, 2)\n"
    "    assert {'pids', 'memory'} <= _launch_groups(groups), groups\n"
    "    assert threads == 1\n"
    "    assert not [f for f in fds if f.endswith('cgroup.procs')], fds\n"
)


@needs_drop
@pytest.mark.skipif(os.geteuid() != 0, reason="launch cgroups are made as root only")
@pytest.mark.parametrize("isolation", ["boundary", "in_process"])
def test_the_first_line_of_test_or_candidate_code_runs_inside_the_launch_cgroups(
    tmp_path: Path, isolation: str
) -> None:
    """The bootstrap joins the launch's cgroups on a thread, beside its import of pytest;
    the join is over before any test module or candidate module runs its first line, in
    either process; the thread is gone by then, and so are the group files it wrote through
    (opened as root: a candidate holding one could move any process into the group)."""
    task = _one_file_task(tmp_path, "launch-groups", _CGROUP_TESTS, "calc.py", isolation)
    limits = TestLimits(per_test_timeout_s=10, collect_timeout_s=30)
    result = _execute(task, _CGROUP_PROBE, limits)

    assert [c.outcome.value for c in result.cases] == ["passed", "passed"], result.output


def test_the_cgroup_join_thread_writes_the_pid_and_a_failure_ends_the_wait(
    tmp_path: Path,
) -> None:
    """`boot._joining` writes this process's pid into each group's cgroup.procs; its wait
    returns once they are written, and a write that failed ends the process (SystemExit)
    at the wait, naming the cause, not silently."""
    from harness.testrun.child import boot

    good = [tmp_path / "a", tmp_path / "b"]
    for folder in good:
        folder.mkdir()
        (folder / "cgroup.procs").write_text("")
    boot._joining([str(p) for p in good])()
    assert [(p / "cgroup.procs").read_text() for p in good] == [str(os.getpid())] * 2

    full = tmp_path / "full"
    full.mkdir()
    (full / "cgroup.procs").symlink_to("/dev/full")
    wait = boot._joining([str(full)])
    with pytest.raises(SystemExit, match="could not join the launch's cgroup"):
        wait()
    with pytest.raises(SystemExit, match="could not join"):
        boot._joining([str(tmp_path / "absent")])
